import { PassThrough } from 'node:stream';
import { describe, expect, it } from 'vitest';
import { CaptionScreen } from '../src/caption-screen.js';
import { Output } from '../src/output.js';

function streams(tty: boolean, columns = 40): { out: Output; stdout: () => string; stderr: () => string } {
  const so = Object.assign(new PassThrough(), { isTTY: tty, columns });
  const se = Object.assign(new PassThrough(), { isTTY: tty });
  let a = '';
  let b = '';
  so.on('data', (d: Buffer) => (a += d.toString()));
  se.on('data', (d: Buffer) => (b += d.toString()));
  return { out: new Output(so, se, false), stdout: () => a, stderr: () => b };
}

describe('CaptionScreen', () => {
  it('on a terminal: the partial is rewritten in place, cut to the width, and redrawn after a status line', async () => {
    const { out, stdout, stderr } = streams(true, 40);
    const screen = new CaptionScreen(out);
    screen.partial('hello');
    screen.partial('hello world '.repeat(10));
    screen.status('reconnecting');
    screen.line('hello world');
    await new Promise((r) => setImmediate(r));
    const writes = stdout().split('\r\x1b[2K');
    expect(writes[1]).toBe('\x1b[2mhello\x1b[0m');
    const long = writes[2] as string;
    expect(long.startsWith('\x1b[2m…')).toBe(true);
    expect(long.replace(/\x1b\[\d*m/g, '').length).toBe(37); // columns - 3: never wraps
    expect(writes[3]).toBe(''); // cleared before the status line...
    expect(writes[4]).toBe(long); // ...and drawn again after it
    expect(writes.at(-1)).toBe('hello world\n');
    expect(stderr()).toBe('[reconnecting]\n');
  });

  it('not on a terminal: no partials, no escape codes, lines and status only', async () => {
    const { out, stdout, stderr } = streams(false);
    const screen = new CaptionScreen(out);
    screen.partial('hel');
    screen.line('hello');
    screen.status('finished');
    screen.end();
    await new Promise((r) => setImmediate(r));
    expect(stdout()).toBe('hello\n');
    expect(stderr()).toBe('[finished]\n');
  });
});
