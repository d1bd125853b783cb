import { inject } from 'vitest';
import { createDatabase, LocalCluster, type FaultHandle, type FaultRule, type Faults, type RequestLogEntry, type RunningServer, type ServerOptions, type SocketFaultRule } from '@soundclone/server';

/**
 * The REST suite's cluster target (SOUNDCLONE_TEST_TARGET=cluster): three nodes of the service in this
 * process over one PostgreSQL database behind haproxy, handed to the tests as a RunningServer:
 *
 *   url, publicUrl, port   the balancer's: every request a test makes goes round robin over the nodes
 *   requests               every node's request log, merged in the order this object first saw the
 *                          entries (so `requests.length` and `requests.slice(from)` keep working)
 *   faults                 each rule injected into every node: `times` counts per node, and a handle's
 *                          hits and remaining add up the nodes'; socket rules likewise, and an action on
 *                          one session (rotateNow, closeSocket, halfOpen) acts on the node holding it
 *   sockets                the nodes' open sockets and logs together
 *   services, recognizer,  the first node's (tests that read domain objects belong to the server package)
 *   node
 *   close()                the whole cluster: haproxy, the nodes, the cluster's database stays until the run ends
 *
 * The nodes run in this process (LocalCluster `inProcess`) so that their request logs and fault switches
 * are at hand and options without a flag (account overrides, task timing, seeds) reach them.
 */
export const CLUSTER_NODES = 3;
let databases = 0;

export async function startTestCluster(options: Partial<ServerOptions> & { accessKeys: readonly string[] }): Promise<RunningServer> {
  const { accessKeys, port: _port, host: _host, ...rest } = options;
  const databaseUrl = await createDatabase(inject('clusterPostgres'), `rest_${process.pid}_${++databases}`);
  const cluster = await LocalCluster.start({ nodes: CLUSTER_NODES, accessKeys, databaseUrl, inProcess: rest });
  const servers = (): RunningServer[] => cluster.nodes.map((n) => n.server).filter((s): s is RunningServer => s !== undefined);
  const log = mergedLog(servers);
  const port = Number(new URL(cluster.url).port);
  const first = servers()[0] as RunningServer;
  const faults = {
    inject(rule: FaultRule): FaultHandle {
      const handles = servers().map((s) => s.faults.inject(rule));
      return {
        get remaining() {
          return handles.reduce((sum, h) => sum + h.remaining, 0);
        },
        get hits() {
          return handles.reduce((sum, h) => sum + h.hits, 0);
        },
        remove: () => handles.forEach((h) => h.remove()),
      };
    },
    clear: () => servers().forEach((s) => s.faults.clear()),
    // Socket rules go to every node; an action on one session acts where the session is.
    socket: {
      inject: (rule: SocketFaultRule) => {
        const handles = servers().map((s) => s.faults.socket.inject(rule));
        return { remove: () => handles.forEach((h) => h.remove()) };
      },
      clear: () => servers().forEach((s) => s.faults.socket.clear()),
      rotateNow: (id: string) => servers().some((s) => s.faults.socket.rotateNow(id)),
      closeSocket: (id: string, code?: number, reason?: string) => servers().some((s) => s.faults.socket.closeSocket(id, code, reason)),
      halfOpen: (id: string) => servers().some((s) => s.faults.socket.halfOpen(id)),
    },
  } as unknown as Faults; // Faults and SocketFaults are classes; this stands for them across the nodes.
  return {
    url: cluster.url,
    publicUrl: cluster.url,
    port,
    faults,
    get requests() {
      return log();
    },
    sockets: {
      get size() {
        return servers().reduce((sum, s) => sum + s.sockets.size, 0);
      },
      get log() {
        return servers().flatMap((s) => s.sockets.log);
      },
    },
    services: first.services,
    recognizer: first.recognizer,
    node: first.node,
    // Every node drains at once, then the cluster stops.
    drain: async (drainOptions) => {
      await Promise.all(servers().map((s) => s.drain(drainOptions)));
      await cluster.stop();
    },
    close: () => cluster.stop(),
  };
}

/**
 * One log of every node's requests: on each read, the entries each node logged since the last read
 * are appended (found after the last entry seen, so a node's log dropping its oldest entries does not
 * shift anything). The merged log only grows; a test's `from` index stays valid.
 */
function mergedLog(servers: () => readonly RunningServer[]): () => readonly RequestLogEntry[] {
  const merged: RequestLogEntry[] = [];
  const lastSeen = new Map<readonly RequestLogEntry[], RequestLogEntry>();
  return () => {
    for (const server of servers()) {
      const entries = server.requests;
      const last = lastSeen.get(entries);
      const start = last === undefined ? 0 : entries.lastIndexOf(last) + 1;
      for (let i = start; i < entries.length; i++) merged.push(entries[i] as RequestLogEntry);
      if (entries.length > 0) lastSeen.set(entries, entries[entries.length - 1] as RequestLogEntry);
    }
    return merged;
  };
}
