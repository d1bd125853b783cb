export const WORKSPACE: string;

export type Forbidden = 'rest-client' | 'rxjs';

export interface BundlePage {
  readonly id: string;
  readonly label: string;
  readonly entry: string;
  readonly forbid: readonly Forbidden[];
  /** Left out of the bundle: the framework, which the app ships anyway. */
  readonly external?: readonly string[];
  readonly ceiling: number;
  readonly target: number | null;
}

export interface PageWeight {
  readonly id: string;
  readonly minified: number;
  readonly gzip: number;
  readonly rxjsGzip: number;
  readonly byPackage: Record<string, number>;
  readonly inputs: readonly string[];
  readonly forbidden: Partial<Record<Forbidden, readonly string[]>>;
}

export const PAGES: readonly BundlePage[];
export function measurePage(page: BundlePage, options?: { root?: string; from?: 'dist' | 'src' }): Promise<PageWeight>;
export function measureWorklet(options?: { root?: string }): Promise<{ bytes: number; gzip: number; ceiling: number; target: number }>;

export interface Adapter {
  readonly id: 'react' | 'vue' | 'svelte';
  readonly external: readonly string[];
  readonly ceiling: number;
}
export const ADAPTERS: readonly Adapter[];
export function measureAdapter(adapter: Adapter, options?: { root?: string; from?: 'dist' | 'src' }): Promise<{ id: string; minified: number; gzip: number }>;
