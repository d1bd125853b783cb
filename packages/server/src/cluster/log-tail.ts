import type { Readable } from 'node:stream';

/** The last lines a child process wrote (stdout and stderr interleaved as they came), for error messages. */
export class LogTail {
  private readonly lines: string[] = [];
  private partial = '';

  constructor(private readonly keep = 30) {}

  follow(stream: Readable | null): void {
    stream?.on('data', (chunk: Buffer) => this.add(chunk.toString('utf8')));
  }

  add(text: string): void {
    const parts = (this.partial + text).split('\n');
    this.partial = parts.pop() ?? '';
    for (const line of parts) {
      if (line.trim() === '') continue;
      this.lines.push(line);
      if (this.lines.length > this.keep) this.lines.shift();
    }
  }

  /** The kept lines, the unfinished last one included; `count` limits them to the newest. */
  tail(count = this.keep): string[] {
    const all = this.partial.trim() === '' ? this.lines : [...this.lines, this.partial];
    return all.slice(-count);
  }
}
