// Server-side template injection: template syntax that evaluates an expression, sent where the
// application renders input as a template (Jinja2, Twig, Freemarker, Velocity, Thymeleaf/Spring EL,
// JSP/JSF EL, ERB, Smarty, Handlebars). Level 1 needs an expression that only a probe or an exploit
// writes — arithmetic between numbers inside the delimiters (`{{7*7}}`, `${7*7}`, `#{7*7}`,
// `<%= 7*7 %>`), object-graph walks to a runtime (`__class__.__mro__`, `getClass().forName`,
// `T(java.lang.Runtime)`), or the directives that run commands. Template code quoted in prose on
// developer sites (`{{ user.name }}`) passes: it has none of those.
import type { RuleDefinition } from '../types.ts';
import { ALL_INPUT } from './fragments.ts';

const T = ALL_INPUT;
/** An arithmetic probe between two numbers (or a number and a quoted number: Jinja's `7*'7'`). */
const ARITHMETIC = String.raw`\s*['"]?\d+['"]?\s*[-*+/%]\s*['"]?\d+['"]?\s*`;

export const SSTI_RULES: readonly RuleDefinition[] = [
  {
    id: 'ssti.arithmetic_probe',
    category: 'ssti',
    paranoia_level: 1,
    description: 'An arithmetic expression inside template delimiters ({{7*7}}, ${7*7}, #{7*7}, *{7*7}, <%= 7*7 %>, [[7*7]])',
    targets: T,
    pattern: String.raw`\{\{${ARITHMETIC}\}\}|[$#*@]\{${ARITHMETIC}\}|<%=${ARITHMETIC}%>|\{\{=${ARITHMETIC}\}\}|\[\[${ARITHMETIC}\]\]`,
  },
  {
    id: 'ssti.object_traversal',
    category: 'ssti',
    paranoia_level: 1,
    description: "Walks from a template's objects to the runtime (__class__.__mro__, __subclasses__(), __globals__, __builtins__, request.application, lipsum.__globals__, self._TemplateReference__context)",
    targets: T,
    pattern: String.raw`__(?:mro|subclasses|globals|builtins)__|[.'"\]]\s*__(?:class|base|bases|init|import)__|\b(?:lipsum|cycler|joiner|namespace|url_for|get_flashed_messages)\s*\.\s*__|request\s*\.\s*application\s*\.|_templatereference__context|\|\s*attr\s*\(\s*['"]__`,
  },
  {
    id: 'ssti.java_expression',
    category: 'ssti',
    paranoia_level: 1,
    description: 'Spring/Thymeleaf/JSP expression language reaching Java classes (${T(java.lang.Runtime)}, getClass().forName, new java.lang.ProcessBuilder, #{…getRuntime()})',
    targets: T,
    pattern: String.raw`(?:[$#*@]\{|\{\{)[^}\n]{0,200}(?:\bt\s*\(\s*java\.|\.getclass\s*\(|class\.forname|\.getruntime\s*\(|processbuilder|\bjava\.lang\.|\.exec\s*\(|scriptenginemanager|\.getmethod\s*\()|\bt\s*\(\s*java\.lang\.(?:runtime|system|processbuilder|class)\s*\)`,
  },
  {
    id: 'ssti.command_directive',
    category: 'ssti',
    paranoia_level: 1,
    description: 'Template directives that run commands or load classes (Freemarker <#assign …?new()> and utility.Execute, Velocity #set($x=…getClass()), Twig _self.env and registerUndefinedFilterCallback, Smarty {php}/{system(…)}, ERB <%= `…` %>)',
    targets: T,
    pattern:
      String.raw`<#\s*(?:assign|import|include|global|setting)\b|freemarker\.template\.utility\.(?:execute|objectconstructor|jythonruntime)|\?\s*new\s*\(\s*\)|` +
      String.raw`#set\s*\(\s*\$[a-z_]\w*\s*=[^)\n]*(?:getclass|forname|runtime|\.exec\b)|\$class\.inspect\s*\(|` +
      String.raw`_self\s*\.\s*env\b|registerundefinedfiltercallback|getfilter\s*\(|\{\{[^}\n]*\|\s*(?:filter|map|reduce|sort)\s*\(\s*['"](?:system|exec|passthru|shell_exec|popen)['"]|` +
      String.raw`\{\s*(?:php|/php)\s*\}|\{\s*(?:system|exec|passthru|shell_exec)\s*\(|<%=?\s*(?:\x60|system\s*\(|%x\s*\(|io\.popen|exec\s*\()|` +
      String.raw`\{\{\s*#\s*with\s+["'][^"']*["']\s+as\s*\|`,
  },
  {
    id: 'ssti.context_probe',
    category: 'ssti',
    paranoia_level: 1,
    description: "Probes of a template engine's context: a value that is only {{self}}, {{config}}, {{request}}, {{dump(app)}}, {$smarty.version}; class walks ({{''.class.mro()}}, [].class.base), a string literal's JavaScript or Java conversion called ({{'a'.toUpperCase()}}; Jinja's {{ '{:,}'.format(x) }} is template code), |attr(…) filters, config.items()",
    targets: T,
    pattern:
      String.raw`^\s*\{\{\s*(?:self|config|request|settings|app|_self|dump\s*\([^)]*\)|range\s*\(\s*\d+\s*\))\s*\}\}\s*$|\{\$smarty\.|\{\{\s*['"][^'"\n]{0,40}['"]\s*\.\s*(?:to[a-z]+|constructor|concat|getclass|__\w+__)\s*\(|\{\{[^}\n]*(?:\.class\b|\.mro\s*\(|\.subclasses\s*\(|\|\s*attr\s*\(|config\s*\.\s*(?:items|iteritems|from_object|from_pyfile)\s*\(|app\s*\.\s*request\s*\.)|` +
      String.raw`\{%[^%\n]*\bconfig\s*\.\s*(?:items|iteritems)\s*\(|@\(\s*\d+\s*[-*+/]\s*\d+\s*\)|(?:[$#]\{|\{\{|<%)[^}\n]{0,200}\b(?:os|subprocess|commands|popen2)\s*\.\s*(?:system|popen|call|check_output|getoutput|run|spawn\w*|exec\w*)\s*\(`,
  },
  {
    id: 'ssti.expression_call',
    category: 'ssti',
    paranoia_level: 2,
    signal: { from: 1, severity: 'warning' },
    description: 'A method call inside template delimiters ({{ config.items() }}, ${user.getName()}, #{bean.method()})',
    targets: T,
    pattern: String.raw`\{\{[^}\n]{0,120}[a-z_]\w*\s*\.\s*[a-z_]\w*\s*\([^}\n]{0,120}\}\}|[$#]\{[^}\n]{0,120}[a-z_]\w*\s*\.\s*[a-z_]\w*\s*\([^}\n]{0,120}\}`,
  },
  {
    id: 'ssti.template_syntax',
    category: 'ssti',
    paranoia_level: 3,
    description: 'Any template expression or directive delimiters ({{ … }}, {% … %}, ${…}, <%= … %>)',
    targets: T,
    pattern: String.raw`\{\{[^}\n]+\}\}|\{%[^%\n]+%\}|\$\{[^}\n]+\}|<%=?[^%\n]+%>`,
  },
];
