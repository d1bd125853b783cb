import { QUALITY_PRESETS } from '@soundclone/core/internal';
import { OUTPUT_RATE } from '../contenders/index.js';
import type { SweepPoint } from '../quality/sweep.js';

/**
 * The magnitude-response figure, hand-written SVG (no plotting dependency): for each input rate a
 * full-range panel (0 to the input Nyquist, down to −170 dB, where aliasing shows) and a passband
 * zoom (0–8 kHz, −0.3 to +0.1 dB, where droop shows). Gains are levels at the output (aliases included), so
 * above 8 kHz the curve is how much of an input tone leaks into the 16 kHz output.
 */
export interface ResponseSeries {
  readonly label: string;
  readonly color: string;
  readonly dashed: boolean;
  /** Ours are drawn heavier, on top. */
  readonly emphasis: boolean;
  readonly points: readonly SweepPoint[];
}

export interface ResponsePanelSet {
  readonly inputRate: number;
  readonly series: readonly ResponseSeries[];
}

interface Frame {
  x: number; y: number; w: number; h: number;
  xMax: number; yMin: number; yMax: number;
}

const WIDTH = 1200;
const ROW_HEIGHT = 400;
const TOP = 70;
const FONT = 'font-family="Helvetica, Arial, sans-serif"';

/** The presets' guarantees from core's QUALITY_PRESETS, as band edges in Hz at 16 kHz output. */
const SPECS = (['best', 'fast'] as const).map((quality) => {
  const p = QUALITY_PRESETS[quality];
  // Edges are fractions of the output rate: 0.425 → 6.8 kHz, 0.5625 → 9 kHz.
  return { quality, passHz: p.passEdge * OUTPUT_RATE, passDb: p.passToleranceDb, stopHz: p.stopEdge * OUTPUT_RATE, stopDb: -p.stopAttenuationDb };
});

export function responseSvg(sets: readonly ResponsePanelSet[]): string {
  const legendY = TOP + sets.length * ROW_HEIGHT + 10;
  const height = legendY + 40;
  const parts: string[] = [
    `<svg xmlns="http://www.w3.org/2000/svg" width="${WIDTH}" height="${height}" viewBox="0 0 ${WIDTH} ${height}">`,
    `<rect width="${WIDTH}" height="${height}" fill="#ffffff"/>`,
    `<text x="${WIDTH / 2}" y="32" ${FONT} font-size="20" font-weight="bold" text-anchor="middle" fill="#222">Magnitude response to 16 kHz: soundclone Resampler vs libsamplerate-js</text>`,
    `<text x="${WIDTH / 2}" y="54" ${FONT} font-size="13" text-anchor="middle" fill="#555">Measured by streaming tones in 128-sample blocks; level at the output frequency (aliases above 8 kHz) relative to the input tone</text>`,
  ];
  sets.forEach((set, row) => {
    const top = TOP + row * ROW_HEIGHT;
    const khz = set.inputRate / 1000;
    const full: Frame = { x: 80, y: top + 40, w: 720, h: ROW_HEIGHT - 110, xMax: set.inputRate / 2, yMin: -170, yMax: 10 };
    const zoom: Frame = { x: 880, y: top + 40, w: 290, h: ROW_HEIGHT - 110, xMax: 8000, yMin: -0.3, yMax: 0.1 };
    parts.push(text(full.x, top + 25, `${khz} kHz → 16 kHz, full range`, 15, 'start', 'bold'));
    parts.push(text(zoom.x, top + 25, `${khz} kHz → 16 kHz, passband`, 15, 'start', 'bold'));
    parts.push(...bands(full), ...axes(full, 2000, 20, 0), ...specLines(full), ...curves(full, set.series, `full${row}`));
    parts.push(...bands(zoom), ...axes(zoom, 1000, 0.05, 2), ...passSpec(zoom), ...curves(zoom, set.series, `zoom${row}`));
  });
  parts.push(...legend(sets[0]?.series ?? [], legendY));
  parts.push('</svg>');
  return parts.join('\n');
}

function sx(f: Frame, hz: number): number { return f.x + (hz / f.xMax) * f.w; }
function sy(f: Frame, db: number): number { return f.y + ((f.yMax - db) / (f.yMax - f.yMin)) * f.h; }

/** Shading: the guaranteed passband (0–6.8 kHz) and the stopband (from 9 kHz). */
function bands(f: Frame): string[] {
  const pass = SPECS[0].passHz, stop = SPECS[0].stopHz;
  const out = [`<rect x="${f.x}" y="${f.y}" width="${sx(f, Math.min(pass, f.xMax)) - f.x}" height="${f.h}" fill="#eaf5ea"/>`];
  if (f.xMax > stop) out.push(`<rect x="${sx(f, stop)}" y="${f.y}" width="${sx(f, f.xMax) - sx(f, stop)}" height="${f.h}" fill="#f6eeee"/>`);
  return out;
}

function axes(f: Frame, xStep: number, yStep: number, yDecimals: number): string[] {
  const out: string[] = [];
  for (let hz = 0; hz <= f.xMax + 1e-9; hz += xStep) {
    const x = sx(f, hz).toFixed(1);
    out.push(`<line x1="${x}" y1="${f.y}" x2="${x}" y2="${f.y + f.h}" stroke="#d8d8d8" stroke-width="1"/>`);
    out.push(text(Number(x), f.y + f.h + 18, String(hz / 1000), 12, 'middle'));
  }
  // Integer steps, so 0 dB is exactly 0 and gets the darker line.
  for (let k = Math.ceil(f.yMin / yStep - 1e-9); k * yStep <= f.yMax + 1e-9; k++) {
    const db = k * yStep;
    const y = sy(f, db).toFixed(1);
    out.push(`<line x1="${f.x}" y1="${y}" x2="${f.x + f.w}" y2="${y}" stroke="${k === 0 ? '#999' : '#d8d8d8'}" stroke-width="1"/>`);
    out.push(text(f.x - 8, Number(y) + 4, db.toFixed(yDecimals).replace('-', '−'), 12, 'end'));
  }
  if (f.xMax > 8000) {
    const x = sx(f, 8000).toFixed(1);
    out.push(`<line x1="${x}" y1="${f.y}" x2="${x}" y2="${f.y + f.h}" stroke="#888" stroke-width="1" stroke-dasharray="2 3"/>`);
    out.push(text(Number(x) + 4, f.y + 14, 'output Nyquist', 11, 'start'));
  }
  out.push(`<rect x="${f.x}" y="${f.y}" width="${f.w}" height="${f.h}" fill="none" stroke="#444" stroke-width="1"/>`);
  out.push(text(f.x + f.w / 2, f.y + f.h + 38, 'input frequency, kHz', 13, 'middle'));
  out.push(`<text transform="translate(${f.x - 50},${f.y + f.h / 2}) rotate(-90)" ${FONT} font-size="13" text-anchor="middle" fill="#333">gain, dB</text>`);
  return out;
}

/** Stopband guarantees: a dashed floor per preset from its stopband edge. */
function specLines(f: Frame): string[] {
  return SPECS.flatMap((spec) => {
    const y = sy(f, spec.stopDb).toFixed(1);
    return [
      `<line x1="${sx(f, spec.stopHz).toFixed(1)}" y1="${y}" x2="${f.x + f.w}" y2="${y}" stroke="#b22" stroke-width="1" stroke-dasharray="5 4"/>`,
      text(f.x + f.w - 4, Number(y) - 4, `${spec.quality} spec`, 11, 'end', 'normal', '#b22'),
    ];
  });
}

/** Passband guarantees: ±tolerance to the passband edge, per preset (those inside the panel). */
function passSpec(f: Frame): string[] {
  return SPECS.flatMap((spec) => {
    const x2 = sx(f, spec.passHz).toFixed(1);
    const lines = [spec.passDb, -spec.passDb]
      .filter((db) => db >= f.yMin && db <= f.yMax)
      .map((db) => `<line x1="${f.x}" y1="${sy(f, db).toFixed(1)}" x2="${x2}" y2="${sy(f, db).toFixed(1)}" stroke="#b22" stroke-width="1" stroke-dasharray="5 4"/>`);
    if (-spec.passDb < f.yMin) return lines;
    return [...lines, text(f.x + 6, sy(f, -spec.passDb) + 14, `${spec.quality} spec ±${spec.passDb} dB`, 11, 'start', 'normal', '#b22')];
  });
}

function curves(f: Frame, series: readonly ResponseSeries[], id: string): string[] {
  const clip = `clip-${id}`;
  const out = [`<clipPath id="${clip}"><rect x="${f.x}" y="${f.y}" width="${f.w}" height="${f.h}"/></clipPath>`];
  // Ours last, so they sit on top of the reference curves.
  const ordered = [...series].sort((a, b) => Number(a.emphasis) - Number(b.emphasis));
  for (const s of ordered) {
    const pts = s.points.filter((p) => p.frequency <= f.xMax);
    // On the full-range panel a point below the floor is pinned to it ("at least this far down");
    // on the zoom a falling curve leaves through the bottom edge, cut by the clip path.
    const floor = f.yMin <= -100 ? f.yMin : f.yMin - (f.yMax - f.yMin);
    const d = pts.map((p, i) => `${i === 0 ? 'M' : 'L'}${sx(f, p.frequency).toFixed(1)} ${sy(f, Math.max(p.gainDb, floor)).toFixed(1)}`).join(' ');
    out.push(`<path d="${d}" fill="none" stroke="${s.color}" stroke-width="${s.emphasis ? 2.2 : 1.6}" stroke-linejoin="round"${s.dashed ? ' stroke-dasharray="7 4"' : ''} clip-path="url(#${clip})"/>`);
  }
  return out;
}

function legend(series: readonly ResponseSeries[], y: number): string[] {
  const out: string[] = [];
  const step = WIDTH / (series.length + 1);
  series.forEach((s, i) => {
    const x = step * (i + 0.5) + 20;
    out.push(`<line x1="${x}" y1="${y + 15}" x2="${x + 36}" y2="${y + 15}" stroke="${s.color}" stroke-width="${s.emphasis ? 3 : 2}"${s.dashed ? ' stroke-dasharray="7 4"' : ''}/>`);
    out.push(text(x + 44, y + 19, s.label, 13, 'start'));
  });
  return out;
}

function text(x: number, y: number, content: string, size: number, anchor: 'start' | 'middle' | 'end', weight = 'normal', fill = '#333'): string {
  return `<text x="${x.toFixed(1)}" y="${y.toFixed(1)}" ${FONT} font-size="${size}" font-weight="${weight}" text-anchor="${anchor}" fill="${fill}">${escape(content)}</text>`;
}

function escape(s: string): string {
  return s.replace(/&/g, '&amp;').replace(/</g, '&lt;').replace(/>/g, '&gt;');
}
