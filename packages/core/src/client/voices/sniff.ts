/**
 * Audio type by content, not by file name (voice files are checked by content). The spec
 * accepts mp3, wav and m4a (spec "POST /voices/tts"):
 *   wav  RIFF....WAVE
 *   mp3  an ID3v2 tag, or an MPEG audio frame sync (11 set bits) with a valid layer and bitrate index
 *   m4a  an ISO BMFF `ftyp` box with an audio MP4 brand
 * The same test as the reference service, so the client never sends what it would refuse.
 */
export type VoiceFileType = 'wav' | 'mp3' | 'm4a';

/** Bytes needed to decide. */
export const SNIFF_BYTES = 12;

const M4A_BRANDS = ['M4A ', 'M4B ', 'mp42', 'isom', 'mp41', 'dash'];

export function sniffVoiceFile(head: Uint8Array): VoiceFileType | undefined {
  if (ascii(head, 0, 4) === 'RIFF' && ascii(head, 8, 4) === 'WAVE') return 'wav';
  if (ascii(head, 0, 3) === 'ID3') return 'mp3';
  if (head.length >= 4 && head[0] === 0xff && ((head[1] as number) & 0xe0) === 0xe0) {
    const layer = ((head[1] as number) >> 1) & 0x03;
    const bitrate = (head[2] as number) >> 4;
    if (layer !== 0 && bitrate !== 0x0f) return 'mp3';
  }
  if (ascii(head, 4, 4) === 'ftyp' && M4A_BRANDS.includes(ascii(head, 8, 4))) return 'm4a';
  return undefined;
}

function ascii(bytes: Uint8Array, offset: number, length: number): string {
  if (bytes.length < offset + length) return '';
  let out = '';
  for (let i = offset; i < offset + length; i++) out += String.fromCharCode(bytes[i] as number);
  return out;
}
