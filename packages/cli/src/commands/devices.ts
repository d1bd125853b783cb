import { listMicrophones } from '@soundclone/node-mic';
import { oneOf, parse } from '../args.js';
import type { CommandContext } from '../command.js';

export async function devices(ctx: CommandContext): Promise<number> {
  const { values } = parse(ctx.args, { backend: { type: 'string' } });
  if (values.help) return ctx.out.print('usage: soundclone devices [--backend auto|pvrecorder|parec|arecord|sox] [--json]'), 0;
  const backend = oneOf(values, 'backend', ['auto', 'pvrecorder', 'parec', 'arecord', 'sox'] as const);
  const list = await listMicrophones(backend === undefined ? {} : { backend });
  ctx.out.table(list, [
    ['index', (d) => d.index],
    ['name', (d) => d.name],
    ['backend', (d) => d.backend],
    ['rate', (d) => d.sampleRate],
    ['channels', (d) => d.channels],
    ['default', (d) => (d.isDefault ? 'yes' : '')],
  ]);
  return 0;
}
