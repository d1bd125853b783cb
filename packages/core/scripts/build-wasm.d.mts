// Types for build-wasm.mjs, so tests written in TypeScript can import it.
export declare const watPath: string;
export declare const bytesPath: string;
export declare const MAX_MODULE_BYTES: number;
export declare function assemble(watSource: string): Promise<Uint8Array>;
export declare function render(bytes: Uint8Array): string;
