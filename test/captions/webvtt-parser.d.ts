// Types for the W3C WebVTT parser/validator (webvtt-parser ships none), as much as the tests use.
declare module 'webvtt-parser' {
  export interface ParsedCue {
    id: string;
    startTime: number;
    endTime: number;
    text: string;
  }
  export interface ParseError {
    message: string;
    line: number;
    col?: number;
  }
  export class WebVTTParser {
    parse(input: string, mode?: 'metadata' | 'chapters'): { cues: ParsedCue[]; errors: ParseError[] };
  }
}
