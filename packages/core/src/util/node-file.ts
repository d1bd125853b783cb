/**
 * Reading a file by path, for Node callers only. `node:fs/promises` is loaded with a dynamic import the
 * first time a path is given, so bundles for browsers and edge runtimes never need it; core has no
 * Node types, so the little we use is typed here.
 */
interface NodeFs {
  stat(path: string): Promise<{ size: number; isFile(): boolean }>;
  readFile(path: string): Promise<Uint8Array>;
}

export type NodeFileResult =
  | { readonly ok: true; readonly blob: Blob; readonly filename: string }
  | { readonly ok: false; readonly problem: string };

export async function readNodeFile(path: string, maxBytes: number, tooLarge: string): Promise<NodeFileResult> {
  let fs: NodeFs;
  try {
    fs = (await import(/* @vite-ignore */ 'node:fs/promises' as string)) as NodeFs;
  } catch (error) {
    return { ok: false, problem: `a file path needs Node's fs module (${(error as Error).message}); pass bytes or a Blob instead` };
  }
  const filename = path.split(/[\\/]/).pop() || 'file';
  try {
    const stat = await fs.stat(path);
    if (!stat.isFile()) return { ok: false, problem: `${path} is not a file` };
    // Refuse an oversized file before reading it into memory.
    if (stat.size > maxBytes) return { ok: false, problem: tooLarge };
    const bytes = await fs.readFile(path);
    return { ok: true, blob: new Blob([bytes as Uint8Array<ArrayBuffer>]), filename };
  } catch (error) {
    return { ok: false, problem: `cannot read ${path}: ${(error as Error).message}` };
  }
}
