import { describe, expect, it } from 'vitest';
import { isAlsaPlugin } from '../src/mic/pvrecorder-backend.js';

describe('pvrecorder device list', () => {
  it("leaves out ALSA's null, converter and filter plugins, keeps the route to the sound server and cards", () => {
    for (const plugin of [
      'Discard all samples (playback) or generate zero samples (capture)',
      'Rate Converter Plugin Using Libav/FFmpeg Library',
      'Rate Converter Plugin Using Samplerate Library',
      'Rate Converter Plugin Using Speex Resampler',
      'Plugin using Speex DSP (resample, agc, denoise, echo, dereverb)',
      'Plugin for channel upmix (4,6,8)',
      'Plugin for channel downmix (stereo) with a simple spacialization',
      'JACK Audio Connection Kit',
      'Open Sound System',
    ]) expect(isAlsaPlugin(plugin), plugin).toBe(true);
    for (const device of ['PulseAudio Sound Server', 'FakeMic', 'HDA Intel PCH, ALC257 Analog', 'USB Audio Device']) expect(isAlsaPlugin(device), device).toBe(false);
  });
});
