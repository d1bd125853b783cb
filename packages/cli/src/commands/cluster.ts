import { CliUsageError } from '../cli-error.js';
import type { CommandContext } from '../command.js';

/**
 * `soundclone cluster`: the server package's local cluster (a throwaway PostgreSQL, N nodes, haproxy)
 * until Ctrl-C, with the flags of its own command (`pnpm --filter @soundclone/server cluster`).
 */
export async function cluster(ctx: CommandContext): Promise<number> {
  const { parseClusterFlags, isServerFlagError, CLUSTER_USAGE, LocalCluster } = await import('@soundclone/server');
  let flags;
  try {
    flags = parseClusterFlags(ctx.args.filter((arg) => arg !== '--json' && arg !== '--debug'));
  } catch (caught) {
    if (isServerFlagError(caught)) throw new CliUsageError(caught.message);
    throw caught;
  }
  if (flags.help) return ctx.out.print(CLUSTER_USAGE.replace(/^usage: cluster /, 'usage: soundclone cluster ')), 0;
  const key = flags.accessKeys[0] as string;
  ctx.out.note(`starting PostgreSQL, ${flags.nodes} node${flags.nodes === 1 ? '' : 's'} and haproxy…`);
  // LocalClusterError and LocalPostgresError carry a code; main prints them as one line.
  const running = await LocalCluster.start({ nodes: flags.nodes, balancerPort: flags.port, accessKeys: flags.accessKeys, nodeArgs: flags.nodeArgs });
  if (ctx.out.json) ctx.out.data({ url: running.url, accessKey: key, nodes: running.nodes.map((n) => ({ url: n.url, pid: n.pid })) });
  else {
    ctx.out.print(running.url);
    ctx.out.print(key);
    for (const node of running.nodes) ctx.out.note(`node ${node.name} ${node.url} (pid ${node.pid})`);
    ctx.out.note(`local cluster behind haproxy; try: soundclone captions --sample --base-url ${running.url} --access-key ${key}`);
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await running.stop();
  ctx.out.note('cluster stopped');
  return 0;
}
