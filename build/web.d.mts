// Types for build/web.mjs (imported by the test setup and the web bench).
export declare const WEB_DIST: string;
export declare function webStaleInput(): string | undefined;
export declare function buildWeb(options?: { quiet?: boolean }): Promise<void>;
