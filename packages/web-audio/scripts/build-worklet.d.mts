export function bundleWorklet(options?: { minify?: boolean }): Promise<string>;
export function writeWorkletArtifacts(outDir?: string): Promise<number>;
