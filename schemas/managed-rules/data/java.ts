// Java attacks: payloads for expression-language injection (Struts OGNL, Spring SpEL), unsafe
// deserialization (XMLDecoder, commons-collections gadget chains) and class-loader manipulation
// (Spring4Shell) have to name the JDK classes that do the damage — Runtime, ProcessBuilder,
// reflection, script engines, JNDI — or the gadget classes that reach them. A fully qualified name in
// one of those packages is not something a form field, a search box or an id carries; on developer
// sites it comes in prose (a question with a stack trace), which levels 1–2 only count as a signal.
import type { RuleDefinition } from '../types.ts';
import { ALL_INPUT, alt, scriptUploadName } from './fragments.ts';

const T = ALL_INPUT;

/** JDK and library packages whose classes run commands, load code, reflect or open connections. */
const DANGEROUS_PACKAGE = alt([
  String.raw`java\.(?:lang(?:\.reflect|\.invoke)?|io|nio(?:\.file)?|net|beans|rmi(?:\.\w+)?|util\.zip|security)`,
  String.raw`javax\.(?:script|naming(?:\.\w+)?|management|el|xml\.transform|sql)`,
  String.raw`sun\.(?:misc|reflect|rmi|net|nio)`,
  String.raw`com\.sun\.(?:jndi|rowset|org\.apache|management|script)`,
  String.raw`jdk\.(?:internal|nashorn|jshell)`,
  String.raw`org\.apache\.(?:commons\.collections\d*(?:\.functors)?|commons\.beanutils|xalan|bcel|naming)`,
  String.raw`org\.springframework\.(?:context|beans|expression|jndi)`,
  String.raw`org\.codehaus\.groovy\.runtime`,
]);
/** Vendor packages that only exploit payloads name (Struts' xwork, OGNL itself, WebLogic internals). */
const EXPLOIT_PACKAGE = alt([String.raw`com\.opensymphony\.xwork2`, String.raw`com\.sun\.org\.apache`, String.raw`org\.omg\.corba`, String.raw`ognl\.ognlcontext`, String.raw`weblogic\.(?:jms|jndi|rmi|servlet\.internal)`, String.raw`com\.bea\.core\.repackaged`]);

/** Classes of deserialization gadget chains (commons-collections, beanutils, Groovy, JDK, JDBC). */
const GADGET = alt([
  'invokertransformer', 'chainedtransformer', 'constanttransformer', 'instantiatetransformer', 'instantiatefactory', 'clonetransformer',
  'prototypeclonefactory', 'prototypeserializationfactory', 'forclosure', 'whileclosure', 'annotationinvocationhandler', 'templatesimpl',
  'jdbcrowsetimpl', 'badattributevalueexpexception', 'methodclosure', 'convertedclosure', 'xmldecoder', 'xstream', 'remoteobjectinvocationhandler',
]);

/**
 * The classes a serialized gadget chain has to name, as their names appear in the stream (and in
 * lower case, as some tools write them). Runtime only with its package: base64 of prose that says
 * "runtime" is no attack.
 */
const SERIALIZED_CLASSES = [
  'java.lang.Runtime', 'java/lang/Runtime', 'ProcessBuilder', 'InvokerTransformer', 'ChainedTransformer', 'ConstantTransformer', 'InstantiateTransformer', 'InstantiateFactory',
  'CloneTransformer', 'PrototypeCloneFactory', 'PrototypeSerializationFactory', 'ForClosure', 'WhileClosure', 'AnnotationInvocationHandler',
  'TemplatesImpl', 'JdbcRowSetImpl', 'MethodClosure', 'XMLDecoder', 'FileWriter', 'getProperty',
];

/**
 * The base64 of `word` at each of the three byte alignments it can have inside a longer stream, each
 * cut to the characters that depend on the word alone, in lower case (patterns read lower case).
 */
function base64Fragments(word: string): string[] {
  return [0, 1, 2].map((lead) => {
    const encoded = btoa('\0'.repeat(lead) + word).replace(/=+$/, '');
    // Lead bytes reach into the first 0, 2 or 3 characters; the last is partial unless the word ends a 3-byte group.
    const end = (lead + word.length) % 3 === 0 ? encoded.length : encoded.length - 1;
    return encoded.slice([0, 2, 3][lead], end).toLowerCase();
  });
}

/** Base64 pieces (12 characters or more) of the class names a Java serialization stream of a gadget chain carries, at every alignment. */
export const JAVA_SERIALIZED_BASE64 = [...new Set(SERIALIZED_CLASSES.flatMap((name) => [name, name.toLowerCase()]).flatMap(base64Fragments))];

const NOT_NAME = String.raw`(?:^|[^\w$.])`;
const NAME_END = String.raw`(?:[^\w$]|$)`;

export const JAVA_RULES: readonly RuleDefinition[] = [
  {
    id: 'java.process_class',
    category: 'java',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A Java process class named through its package (java.lang.Runtime, java.ProcessBuilder, java.evil.runtime)',
    targets: T,
    pattern: String.raw`${NOT_NAME}java\.(?:[\w$]+\.){0,4}(?:runtime|processbuilder|processimpl|unixprocess)${NAME_END}`,
  },
  {
    id: 'java.dangerous_class',
    category: 'java',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A fully qualified class in a JDK or library package that runs code, reflects, loads classes or opens connections (java.io.File, javax.script.ScriptEngineManager, com.sun.org.apache…)',
    targets: T,
    pattern: String.raw`${NOT_NAME}(?:${DANGEROUS_PACKAGE}\.[a-z_$][\w$]*|${EXPLOIT_PACKAGE})${NAME_END}`,
  },
  {
    id: 'java.gadget_class',
    category: 'java',
    paranoia_level: 1,
    in_prose: 'warning',
    description: 'A class of a known deserialization gadget chain (InvokerTransformer, TemplatesImpl, JdbcRowSetImpl, XMLDecoder)',
    targets: T,
    pattern: String.raw`(?:^|[^a-z0-9])${GADGET}(?:[^a-z0-9]|$)`,
  },
  {
    id: 'java.serialized_base64',
    category: 'java',
    paranoia_level: 1,
    description: "A Java serialization stream in base64, or a piece of one: its magic bytes at a token's start (rO0AB…, KztAAU, Cs7QAF) or a gadget or process class's name in base64 at any alignment (…SW52b2tlclRyYW5zZm9ybWVy… is 'InvokerTransformer')",
    // Not the body whole: in XML, names of elements and attributes are no data.
    targets: T.filter((target) => target !== 'body'),
    pattern: String.raw`(?:^|[^a-z0-9+/])(?:ro0ab[a-z0-9+/]|kztaa[u-x]|cs7qaf)|${alt(JAVA_SERIALIZED_BASE64.map((piece) => piece.replaceAll('+', '\\+')))}`,
  },
  {
    id: 'java.expression_access',
    category: 'java',
    paranoia_level: 1,
    description: "OGNL and SpEL reaching the runtime or class loaders (#_memberAccess, @java.lang.Runtime@, #context['xwork…'], T(java…), class.module.classLoader)",
    targets: T,
    pattern: String.raw`#_?memberaccess|@(?:java|javax|ognl|org|com)\.[\w.$]+@|#context\s*\[\s*['"]|#application\s*\[\s*['"]|#request\s*\[\s*['"]struts|\bt\s*\(\s*java\.|(?:^|[^\w])class\s*\.\s*(?:module\s*\.\s*)?classloader\b|\.getclass\s*\(\s*\)\s*\.\s*(?:forname|getclassloader|getmethod)\s*\(|\bnew\s+java\.[\w.$]+\s*\(`,
  },
  {
    id: 'java.disguised_script_upload',
    category: 'java',
    paranoia_level: 1,
    description: 'An uploaded JSP page named to slip past an extension check: dots or spaces after the extension (a.jsp.., shell.jsp␠), a space before it (shell. jsp), or an extension only a JSP container serves and no project keeps its files under (.jsw, .jsv); a plain .jsp, .jspx or .jspf is java.script_upload',
    targets: ['file_name'],
    pattern: scriptUploadName(['jspx?', 'jspf', 'jsw', 'jsv'], ['jsw', 'jsv']),
  },
  {
    id: 'java.script_upload',
    category: 'java',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'An uploaded file named as a JSP page (.jsp, .jspx, .jspf, .jsw, .jsv, a.jsp.., shell. jsp): file-sharing apps take such files as data, so level 1 only counts it',
    targets: ['file_name'],
    pattern: String.raw`\.\s*(?:jsp|jspx|jspf|jsw|jsv)[\s.]*$`,
  },
];
