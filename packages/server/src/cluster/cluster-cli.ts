import { isServerFlagError } from '../cli-flags.js';
import { isLocalClusterError } from './cluster-error.js';
import { CLUSTER_USAGE, parseClusterFlags } from './cluster-flags.js';
import { LocalCluster } from './local-cluster.js';
import { isLocalPostgresError } from './local-postgres.js';

/**
 * `pnpm --filter @soundclone/server cluster -- [--nodes 3] [--access-key K] [--recognizer auto]`:
 * a local cluster until Ctrl-C (cluster-flags.ts lists the flags). stdout: the balancer's base URL,
 * then the access key; progress and the nodes' addresses go to stderr.
 */
async function main(): Promise<void> {
  let flags;
  try {
    flags = parseClusterFlags(process.argv.slice(2));
  } catch (error) {
    if (!isServerFlagError(error)) throw error;
    process.stderr.write(`error: ${error.message}\n`);
    process.exitCode = 2;
    return;
  }
  if (flags.help) {
    process.stdout.write(CLUSTER_USAGE);
    return;
  }
  process.stderr.write(`starting PostgreSQL, ${flags.nodes} node${flags.nodes === 1 ? '' : 's'} and haproxy…\n`);
  let cluster: LocalCluster;
  try {
    cluster = await LocalCluster.start({ nodes: flags.nodes, balancerPort: flags.port, accessKeys: flags.accessKeys, nodeArgs: flags.nodeArgs });
  } catch (error) {
    if (!isLocalClusterError(error) && !isLocalPostgresError(error)) throw error;
    process.stderr.write(`error: ${error.message} [${error.code}]\n`);
    process.exitCode = 1;
    return;
  }
  process.stdout.write(`${cluster.url}\n${flags.accessKeys[0] as string}\n`);
  for (const node of cluster.nodes) process.stderr.write(`  node ${node.name} ${node.url} (pid ${node.pid})\n`);
  process.stderr.write(`  balancer ${cluster.url} (haproxy, health check: ${cluster.healthCheck.kind === 'http' ? `GET ${cluster.healthCheck.path}` : 'TCP'}); PostgreSQL ${cluster.databaseUrl}\n`);
  process.stderr.write(`try: soundclone captions --sample --base-url ${cluster.url} --access-key ${flags.accessKeys[0] as string}\nCtrl-C stops everything.\n`);
  await new Promise<void>((resolve) => {
    process.once('SIGINT', resolve);
    process.once('SIGTERM', resolve);
  });
  process.stderr.write('stopping…\n');
  await cluster.stop();
  process.stderr.write('cluster stopped\n');
}

void main();
