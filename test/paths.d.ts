export declare const repoRoot: string;
/**
 * The built package that child processes load. AGENT_LAB_DIST points the same tests at another
 * build, which is how scripts/prove-migration-race.sh runs them against an unguarded migration.
 */
export declare const distDir: string;
export declare const distEntryUrl: string;
/** The store alone: eight worker threads loading the whole package (tokenizer tables and all) spend
 * most of a round importing, not migrating. */
export declare const distStoreUrl: string;
/** A fresh folder per test, removed afterwards. */
export declare function temporaryDirectory(): {
    path: string;
    remove(): void;
};
