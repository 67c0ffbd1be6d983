// The config side of the reconciler: what a config repository (or cdktf's Terraform JSON) asks for,
// and everything wrong with it, found offline.
export { configDocumentSchema, configSpecSchema, terraformAttributesSchema, CONFIG_API_VERSION, NAME_PATTERN } from './envelope-schema.ts';
export { loadConfigDir, loadConfigDirDetailed, loadConfigText, loadConfigTextDetailed, type DetailedLoad, type RejectedDocument } from './load.ts';
export { validateConfig, loadAndValidate, RESERVED_LABEL_PREFIX, type ValidateOptions } from './validate.ts';
export { lintConfig, coversEveryAddress, blocksEverything, matchesWholeSite } from './lint.ts';
export { loadTerraformJson, loadTerraformJsonText } from './terraform-json.ts';
export { validateCommand, validateSource, VALIDATE_USAGE, type ValidationReport } from './validate-command.ts';
export { fieldOrigin, type FieldOrigin } from './origins.ts';
export { isWarning, sortProblems, compareLocations, WARNING_PREFIX } from './problems.ts';
