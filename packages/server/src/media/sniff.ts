/**
 * Content sniffing by magic bytes (voice files are checked by content, not by name).
 * Returns the detected kind or undefined.
 */
export type SniffedKind = 'wav' | 'mp3' | 'm4a';

export function sniffAudio(bytes: Uint8Array): SniffedKind | undefined {
  if (ascii(bytes, 0, 4) === 'RIFF' && ascii(bytes, 8, 4) === 'WAVE') return 'wav';
  // MP3: an ID3v2 tag, or an MPEG audio frame sync (11 set bits) with a valid layer and bitrate.
  if (ascii(bytes, 0, 3) === 'ID3') return 'mp3';
  if (bytes.length >= 4 && bytes[0] === 0xff && ((bytes[1] as number) & 0xe0) === 0xe0) {
    const layer = ((bytes[1] as number) >> 1) & 0x03;
    const bitrate = (bytes[2] as number) >> 4;
    if (layer !== 0 && bitrate !== 0x0f) return 'mp3';
  }
  // M4A: an ISO BMFF `ftyp` box whose major brand is an audio MP4 brand.
  if (ascii(bytes, 4, 4) === 'ftyp') {
    const brand = ascii(bytes, 8, 4);
    if (['M4A ', 'M4B ', 'mp42', 'isom', 'mp41', 'dash'].includes(brand)) return 'm4a';
  }
  return undefined;
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  if (bytes.length < offset + length) return '';
  return String.fromCharCode(...bytes.subarray(offset, offset + length));
}
