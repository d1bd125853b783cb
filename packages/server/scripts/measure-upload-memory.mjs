#!/usr/bin/env node
/**
 * Measures what a large upload costs the reference server in memory: the server runs in a child process
 * (so the client's own copy of the file is not counted); its resident set (VmRSS) and peak (VmHWM) are
 * read from /proc after start, after the upload and after a transcription of it completed.
 *
 *   node scripts/measure-upload-memory.mjs [--server path/to/dist/index.js] [--rate 16000] [--bits 16]
 *        [--channels 1] [--mib 100]
 *
 * Linux only (/proc). Prints one JSON object; numbers in MiB (heap and buffers after a
 * forced GC in the server process).
 */
import { spawn } from 'node:child_process';
import { readFileSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';

const { values } = parseArgs({
  options: {
    server: { type: 'string', default: fileURLToPath(new URL('../dist/index.js', import.meta.url)) },
    rate: { type: 'string', default: '16000' },
    bits: { type: 'string', default: '16' },
    channels: { type: 'string', default: '1' },
    mib: { type: 'string', default: '100' },
  },
});
const rate = Number(values.rate);
const bits = Number(values.bits);
const channels = Number(values.channels);
const total = Number(values.mib) * 1024 * 1024;

function wav() {
  const bytes = Buffer.alloc(total);
  const dataLength = total - 44;
  bytes.write('RIFF', 0, 'ascii');
  bytes.writeUInt32LE(total - 8, 4);
  bytes.write('WAVE', 8, 'ascii');
  bytes.write('fmt ', 12, 'ascii');
  bytes.writeUInt32LE(16, 16);
  bytes.writeUInt16LE(1, 20);
  bytes.writeUInt16LE(channels, 22);
  bytes.writeUInt32LE(rate, 24);
  bytes.writeUInt32LE((rate * channels * bits) / 8, 28);
  bytes.writeUInt16LE((channels * bits) / 8, 32);
  bytes.writeUInt16LE(bits, 34);
  bytes.write('data', 36, 'ascii');
  bytes.writeUInt32LE(dataLength, 40);
  // A 440 Hz tone, on for one second in three, so the recogniser has bursts to work on.
  const sampleBytes = bits / 8;
  const frames = Math.floor(dataLength / (sampleBytes * channels));
  for (let f = 0; f < frames; f++) {
    const on = Math.floor(f / rate) % 3 === 0;
    const v = on ? 0.4 * Math.sin((2 * Math.PI * 440 * f) / rate) : 0;
    for (let c = 0; c < channels; c++) {
      const at = 44 + (f * channels + c) * sampleBytes;
      if (bits === 8) bytes[at] = Math.round(128 + v * 127);
      else bytes.writeInt16LE(Math.round(v * 32767), at);
    }
  }
  return bytes;
}

const mib = (bytes) => Math.round(bytes / 1048576);

/** RSS now and at peak (from /proc), then the heap and off-heap buffers after a full GC (the child reports them). */
async function memory(child) {
  const status = readFileSync(`/proc/${child.pid}/status`, 'utf8');
  const kb = (name) => Number(new RegExp(`^${name}:\\s+(\\d+) kB`, 'm').exec(status)?.[1] ?? NaN);
  const gced = await new Promise((resolve) => {
    child.once('message', resolve);
    child.send('measure');
  });
  return { rssMiB: Math.round(kb('VmRSS') / 1024), peakRssMiB: Math.round(kb('VmHWM') / 1024), heapUsedMiB: mib(gced.heapUsed), externalMiB: mib(gced.external), arrayBuffersMiB: mib(gced.arrayBuffers) };
}

const script = `import { startServer } from ${JSON.stringify(pathToFileURL(values.server).href)};
const s = await startServer({ accessKeys: ['k'], port: 0, taskTiming: { queueMs: 1, processingMs: 1, reconcilingMs: 1 } });
console.log(s.url);
process.on('message', async () => { globalThis.gc(); await new Promise((r) => setTimeout(r, 200)); globalThis.gc(); const m = process.memoryUsage(); process.send({ heapUsed: m.heapUsed, external: m.external, arrayBuffers: m.arrayBuffers }); });`;
const child = spawn(process.execPath, ['--expose-gc', '--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit', 'ipc'] });
const url = await new Promise((resolve, reject) => {
  child.stdout.once('data', (d) => resolve(String(d).trim()));
  child.once('exit', (code) => reject(new Error(`server exited ${code}`)));
});
const api = `${url}/sound_clone/api/v1`;
const headers = { accessKey: 'k' };
try {
  await new Promise((r) => setTimeout(r, 500));
  const started = await memory(child);
  let body = wav();
  const up = await (await fetch(`${api}/uploads`, { method: 'POST', headers: { ...headers, 'Content-Type': 'audio/wav' }, body })).json();
  body = undefined;
  if (up.code !== 1) throw new Error(`upload refused: ${JSON.stringify(up)}`);
  await new Promise((r) => setTimeout(r, 1000));
  const uploaded = await memory(child);
  const t0 = Date.now();
  const created = await (await fetch(`${api}/stt/transcriptions`, {
    method: 'POST', headers: { ...headers, 'Content-Type': 'application/json', 'Idempotency-Key': `m-${Date.now()}` },
    body: JSON.stringify({ uploadId: up.data.uploadId, options: { separateSpeakers: false } }),
  })).json();
  if (created.code !== 1) throw new Error(`transcription refused: ${JSON.stringify(created)}`);
  let task = created.data;
  while (!['COMPLETED', 'PARTIAL', 'FAILED'].includes(task.status)) {
    await new Promise((r) => setTimeout(r, 200));
    task = (await (await fetch(`${api}/stt/transcriptions/${task.transcriptionId}`, { headers })).json()).data;
  }
  const transcribed = await memory(child);
  console.log(JSON.stringify({
    server: values.server, file: { mib: Number(values.mib), rate, bits, channels, durationMs: up.data.media.durationMs },
    started, afterUpload: uploaded, afterTranscription: { ...transcribed, status: task.status, seconds: Math.round((Date.now() - t0) / 100) / 10 },
  }, null, 2));
} finally {
  child.kill();
}
