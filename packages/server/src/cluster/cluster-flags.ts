import { randomBytes } from 'node:crypto';
import { parseServerFlags, ServerFlagError } from '../cli-flags.js';

/**
 * The local cluster command's flags, shared by `pnpm --filter @soundclone/server cluster` and
 * `soundclone cluster`: its own (--nodes, --port, --help) and every node's, which are the server's
 * command's flags (cli-flags.ts) minus those the cluster decides for each node (--port, --host,
 * --database-url, --public-url, --data-dir). The node flags are checked here once, with the server's
 * own parser, so a bad one is refused before anything starts.
 */
export const CLUSTER_USAGE =
  'usage: cluster [--nodes 3] [--port N] [--access-key KEY ...] [--recognizer auto|pocketsphinx|deterministic] [server flags]\n' +
  '  Starts a throwaway PostgreSQL, N nodes of the service on it and haproxy in front of them, all on 127.0.0.1,\n' +
  '  and prints the balancer\'s base URL and the access key; Ctrl-C stops everything and removes the data.\n' +
  '  --nodes N        how many nodes (default 3)\n' +
  '  --port N         the balancer\'s port (default: a free one)\n' +
  '  --access-key K   one or more; default a random key, printed\n' +
  '  every other flag goes to each node (the server\'s own flags, e.g. --recognizer, --max-decoders);\n' +
  '  --host, --database-url, --public-url and --data-dir are the cluster\'s to set.\n';

const CLUSTER_OWNED = ['--host', '--database-url', '--public-url', '--data-dir'];

export interface ClusterFlags {
  readonly help: boolean;
  readonly nodes: number;
  /** The balancer's port (0: a free one). */
  readonly port: number;
  readonly accessKeys: readonly string[];
  /** Whether the key was made up here (the command prints it either way). */
  readonly generatedKey: boolean;
  /** The flags for every node's command, access keys excluded (the cluster passes those). */
  readonly nodeArgs: readonly string[];
}

/** Parses argv (after the command name; a lone `--` is ignored). Throws ServerFlagError. */
export function parseClusterFlags(argv: readonly string[]): ClusterFlags {
  let nodes = 3;
  let port = 0;
  let help = false;
  const accessKeys: string[] = [];
  const nodeArgs: string[] = [];
  const args = argv.filter((a) => a !== '--');
  for (let i = 0; i < args.length; i++) {
    const arg = args[i] as string;
    const [name, inline] = arg.startsWith('--') && arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string => {
      const v = inline ?? args[++i];
      if (v === undefined) throw new ServerFlagError(`${name} takes a value`);
      return v;
    };
    if (name === '--help' || name === '-h') help = true;
    else if (name === '--nodes') nodes = wholeNumber(name, value(), 1, 64);
    else if (name === '--port') port = wholeNumber(name, value(), 0, 65_535);
    else if (name === '--access-key') accessKeys.push(value());
    else if (CLUSTER_OWNED.includes(name)) throw new ServerFlagError(`${name} is set by the cluster for each node; leave it out`);
    else nodeArgs.push(arg);
  }
  const generatedKey = accessKeys.length === 0;
  if (generatedKey) accessKeys.push(`dev-${randomBytes(8).toString('hex')}`);
  // The server's parser refuses what a node would refuse (unknown flags, bad values).
  if (!help) parseServerFlags([...nodeArgs, '--access-key', accessKeys[0] as string]);
  return { help, nodes, port, accessKeys, generatedKey, nodeArgs };
}

function wholeNumber(name: string, raw: string, min: number, max: number): number {
  const n = Number(raw);
  if (!Number.isInteger(n) || n < min || n > max) throw new ServerFlagError(`${name} takes a whole number in ${min}..${max}, got ${raw}`);
  return n;
}
