import { describe, expect, it } from 'vitest';
import { isServerFlagError } from '../../src/cli-flags.js';
import { parseClusterFlags } from '../../src/cluster/cluster-flags.js';

describe('parseClusterFlags', () => {
  it('defaults: 3 nodes, a free balancer port, a made-up key; other flags go to every node', () => {
    const flags = parseClusterFlags(['--', '--recognizer', 'deterministic', '--max-decoders=2']);
    expect(flags).toMatchObject({ help: false, nodes: 3, port: 0, generatedKey: true, nodeArgs: ['--recognizer', 'deterministic', '--max-decoders=2'] });
    expect(flags.accessKeys).toHaveLength(1);
    expect(flags.accessKeys[0]).toMatch(/^dev-[0-9a-f]{16}$/);
  });

  it('takes --nodes, --port and several --access-key, which stay out of the node flags', () => {
    const flags = parseClusterFlags(['--nodes', '2', '--port=9100', '--access-key', 'a', '--access-key=b']);
    expect(flags).toMatchObject({ nodes: 2, port: 9100, accessKeys: ['a', 'b'], generatedKey: false, nodeArgs: [] });
  });

  it.each([
    [['--database-url', 'postgres://x@h/db'], '--database-url is set by the cluster'],
    [['--public-url', 'http://x'], '--public-url is set by the cluster'],
    [['--host', '0.0.0.0'], '--host is set by the cluster'],
    [['--nodes', '0'], '--nodes takes a whole number in 1..64'],
    [['--port', 'x'], '--port takes a whole number'],
    [['--recognizer', 'whisper'], '--recognizer takes'],
    [['--no-such-flag'], 'no-such-flag'],
  ])('refuses %j with ServerFlagError naming the flag', (argv, message) => {
    let caught: unknown;
    try {
      parseClusterFlags(argv);
    } catch (error) {
      caught = error;
    }
    expect(isServerFlagError(caught)).toBe(true);
    expect((caught as Error).message).toContain(message);
  });
});
