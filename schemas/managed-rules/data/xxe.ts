// XML external entities and other ways an XML body makes the parser fetch: DOCTYPE with an external
// identifier, entity declarations (external and parameter entities), XInclude, schemas pulled in
// by the document, and XML declared in UTF-7 (which hides all of the former from byte-level
// filters). Clients of XML and SOAP APIs send documents, not DTDs: none of this is legitimate input.
import type { RuleDefinition } from '../types.ts';

const T = ['value', 'header', 'body'] as const;

export const XXE_RULES: readonly RuleDefinition[] = [
  {
    id: 'xxe.external_doctype',
    category: 'xxe',
    paranoia_level: 1,
    description: 'A DOCTYPE with an external identifier or an internal subset (<!DOCTYPE x SYSTEM "…">, <!DOCTYPE x [ …)',
    targets: T,
    pattern: String.raw`<!\s*doctype\s+[\w:.-]+\s+(?:system|public)\s|<!\s*doctype\s+[\w:.-]+\s*\[`,
  },
  {
    id: 'xxe.entity_declaration',
    category: 'xxe',
    paranoia_level: 1,
    description: 'An entity declaration, external or parameter (<!ENTITY x SYSTEM …>, <!ENTITY % p …>)',
    targets: T,
    pattern: String.raw`<!\s*entity\s+(?:%\s*)?[\w.:-]+\s`,
  },
  {
    id: 'xxe.xinclude',
    category: 'xxe',
    paranoia_level: 1,
    description: 'XInclude (xmlns:xi="http://www.w3.org/2001/XInclude", <xi:include href=…>)',
    targets: T,
    pattern: String.raw`w3\.org/2001/xinclude|<\s*[\w-]+\s*:\s*include\s[^>]*\bhref\s*=`,
  },
  {
    id: 'xxe.schema_import',
    category: 'xxe',
    paranoia_level: 1,
    description: 'A document that makes the parser load schemas or stylesheets (<xs:include>, <xs:import>, <xs:redefine>, <?xml-stylesheet href=…?> to a remote URL)',
    targets: T,
    pattern: String.raw`<\s*[\w-]+\s*:\s*(?:include|import|redefine|override)\s[^>]*\b(?:schemalocation|namespace)\s*=|<\?\s*xml-stylesheet\s[^>]*href\s*=\s*['"]?(?:https?|ftp|file):`,
  },
  {
    id: 'xxe.utf7_document',
    category: 'xxe',
    paranoia_level: 1,
    description: 'An XML document declared in UTF-7, which hides markup from byte-level inspection',
    targets: T,
    pattern: String.raw`<\?\s*xml[^>]*\bencoding\s*=\s*['"]?\s*utf-?7`,
  },
  {
    id: 'xxe.xslt',
    category: 'xxe',
    paranoia_level: 1,
    description: 'An XSLT stylesheet (<xsl:stylesheet>, <xsl:value-of select="system-property(…)">, php:function): XSLT injection where input is transformed',
    targets: T,
    pattern: String.raw`<\s*xsl\s*:\s*(?:stylesheet|transform|template|value-of|copy-of|include|import)\b|\bphp\s*:\s*function\s*\(|system-property\s*\(\s*['"]xsl:`,
  },
  {
    id: 'xxe.schema_location',
    category: 'xxe',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'An xsi:schemaLocation or noNamespaceSchemaLocation pointing at a URL (validating parsers fetch it)',
    targets: T,
    pattern: String.raw`\b(?:schemalocation|nonamespaceschemalocation)\s*=\s*['"][^'"]*(?:https?|ftp|file)://`,
  },
];
