// The package entry of @aegis/cdktf-provider. The bindings under gen/ are generated (`npm run
// provider:cdktf`); this file is the only hand-written module. Every binding is exported twice:
// as a namespace, the way @cdktf/provider-* packages do (`shieldSite.ShieldSite`), and flat
// (`ShieldSite`), which reads better in an app. The generated names are prefixed by their resource,
// so the flat exports cannot collide; test/provider/cdktf-package.test.ts fails when a generated
// binding is missing here.
export * from './gen/index.ts';
export * from './gen/data-aegis-shield-site/index.ts';
export * from './gen/data-aegis-shield-sites/index.ts';
export * from './gen/ip-access-rule/index.ts';
export * from './gen/provider/index.ts';
export * from './gen/rate-limit-rule/index.ts';
export * from './gen/scan-schedule/index.ts';
export * from './gen/shield-certificate/index.ts';
export * from './gen/shield-schema/index.ts';
export * from './gen/shield-site/index.ts';
export * from './gen/virtual-patch/index.ts';
export * from './gen/webhook/index.ts';
