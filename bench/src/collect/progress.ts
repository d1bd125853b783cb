/** Progress goes to stderr, so stdout carries only the tables. */
export function progress(line: string): void {
  process.stderr.write(`  ${line}\n`);
}
