;; FIR kernels for the streaming resampler (../resampler.ts), f32x4 SIMD. Exports:
;;   poly      any ratio, one coefficient row per phase
;;   sym       integer decimation, folded symmetric row
;;   sanitize  non-finite input samples to 0, after the Resampler memcpys a block into the history
;;   pcm16     float outputs to PCM16 (../pcm16.ts's rounding and clipping); poly and sym call it
;;             themselves when given a $pcm address (Resampler.processPcm16)
;;
;; Assembled by packages/core/scripts/build-wasm.mjs into fir-simd-bytes.ts; a test re-assembles
;; this file and compares the bytes, so edit here and run `pnpm --filter @soundclone/core build:wasm`.
;;
;; Every Resampler owns one fixed-size memory (no growth, so its typed-array views never detach)
;; laid out by WasmFir (wasm-fir.ts); all addresses below are byte addresses in it:
;;
;;   0        16                  64-aligned         64-aligned       64-aligned
;;   | result | phase entries ... | coefficient rows | output scratch | history | zero pad |
;;
;;   result:       i32 next window address, i32 next phase entry address (written by poly/sym)
;;   phase entry:  i32 row address, i32 advance in bytes, i32 next entry address, i32 unused
;;   rows:         `up` rows of `rowBytes` (taps rounded up to 16 floats, zero padded), or for sym
;;                 one folded half row (see below)
;;   zero pad:     64 bytes after the history, never written
;;
;; Padded taps have zero coefficients and read past the window, but only ever finite floats (the
;; history holds sanitized input, stale or not, and the zero pad follows it), so they add exactly 0.
;;
;; Each output is a fixed sum in a fixed order over a fixed window: four f32x4 accumulators, then
;; (a0+a1)+(a2+a3), then (l0+l1)+(l2+l3). The result does not depend on how the input was chunked.
;; f32 accumulation: the rounding noise is ~-140 dB, below the presets' guarantees by 20 dB or more
;; (test/dsp/wasm-kernel.test.ts compares against the f64-accumulating JS kernel).
(module
  (import "env" "memory" (memory 1))

  ;; Any ratio. Writes up to $max outputs to $out, stopping before the first window that starts
  ;; past $last (= address of history[available - taps]). Returns the count; the next window and
  ;; phase entry go to bytes 0 and 4. With $pcm ≠ 0 the outputs are then also quantized to int16 at
  ;; $pcm (see pcm16; 0 is the result area, never an output, so it means "floats only").
  (func (export "poly")
    (param $pos i32) (param $entry i32) (param $last i32) (param $out i32) (param $max i32)
    (param $rowBytes i32) ;; padded taps · 4, a multiple of 64
    (param $pcm i32)
    (result i32)
    (local $o i32) (local $oEnd i32) (local $c i32) (local $cEnd i32) (local $x i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (local.set $o (local.get $out))
    (local.set $oEnd (i32.add (local.get $out) (i32.shl (local.get $max) (i32.const 2))))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $o) (local.get $oEnd)))
        (br_if $done (i32.gt_u (local.get $pos) (local.get $last)))
        (local.set $c (i32.load (local.get $entry)))
        (local.set $cEnd (i32.add (local.get $c) (local.get $rowBytes)))
        (local.set $x (local.get $pos))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0))
        (loop $mac
          (local.set $a0 (f32x4.add (local.get $a0)
            (f32x4.mul (v128.load (local.get $c)) (v128.load (local.get $x)))))
          (local.set $a1 (f32x4.add (local.get $a1)
            (f32x4.mul (v128.load offset=16 (local.get $c)) (v128.load offset=16 (local.get $x)))))
          (local.set $a2 (f32x4.add (local.get $a2)
            (f32x4.mul (v128.load offset=32 (local.get $c)) (v128.load offset=32 (local.get $x)))))
          (local.set $a3 (f32x4.add (local.get $a3)
            (f32x4.mul (v128.load offset=48 (local.get $c)) (v128.load offset=48 (local.get $x)))))
          (local.set $c (i32.add (local.get $c) (i32.const 64)))
          (local.set $x (i32.add (local.get $x) (i32.const 64)))
          (br_if $mac (i32.lt_u (local.get $c) (local.get $cEnd))))
        (f32.store (local.get $o)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.tee $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1))
                                                                    (f32x4.add (local.get $a2) (local.get $a3)))))
                     (f32x4.extract_lane 1 (local.get $a0)))
            (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $o (i32.add (local.get $o) (i32.const 4)))
        (local.set $pos (i32.add (local.get $pos) (i32.load offset=4 (local.get $entry))))
        (local.set $entry (i32.load offset=8 (local.get $entry)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $pos))
    (i32.store offset=4 (i32.const 0) (local.get $entry))
    (local.set $o (i32.shr_u (i32.sub (local.get $o) (local.get $out)) (i32.const 2)))
    (if (local.get $pcm) (then (call $pcm16 (local.get $out) (local.get $pcm) (local.get $o))))
    (local.get $o))

  ;; Integer decimation (one phase, row symmetric about taps/2 - 1, last tap zero): the row is
  ;; folded, h[k] + h[taps-2-k] times c[k] for k < taps/2, so half the multiplies. The centre tap
  ;; pairs with itself; its coefficient is stored halved (exact: both factors scale by powers of two).
  ;; The half row is zero padded to a multiple of 16. $mirror = (taps - 5)·4 is the offset from the
  ;; window start to the mirrored block of k = 0..3, loaded forward and reversed with a shuffle.
  ;; $pcm as for poly.
  (func (export "sym")
    (param $pos i32) (param $last i32) (param $out i32) (param $max i32)
    (param $coef i32) (param $halfBytes i32) (param $mirror i32) (param $step i32)
    (param $pcm i32)
    (result i32)
    (local $o i32) (local $oEnd i32) (local $c i32) (local $cEnd i32) (local $lo i32) (local $hi i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128) (local $m v128)
    (local.set $o (local.get $out))
    (local.set $oEnd (i32.add (local.get $out) (i32.shl (local.get $max) (i32.const 2))))
    (local.set $cEnd (i32.add (local.get $coef) (local.get $halfBytes)))
    (block $done
      (loop $next
        (br_if $done (i32.ge_u (local.get $o) (local.get $oEnd)))
        (br_if $done (i32.gt_u (local.get $pos) (local.get $last)))
        (local.set $c (local.get $coef))
        (local.set $lo (local.get $pos))
        ;; $hi + 48 is the mirror of k = 0..3; $hi + 32 of k = 4..7, and so on down.
        (local.set $hi (i32.sub (i32.add (local.get $pos) (local.get $mirror)) (i32.const 48)))
        (local.set $a0 (v128.const i32x4 0 0 0 0))
        (local.set $a1 (v128.const i32x4 0 0 0 0))
        (local.set $a2 (v128.const i32x4 0 0 0 0))
        (local.set $a3 (v128.const i32x4 0 0 0 0))
        (loop $mac
          (local.set $a0 (f32x4.add (local.get $a0)
            (f32x4.mul (v128.load (local.get $c))
              (f32x4.add (v128.load (local.get $lo))
                (i8x16.shuffle 12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3
                  (local.tee $m (v128.load offset=48 (local.get $hi))) (local.get $m))))))
          (local.set $a1 (f32x4.add (local.get $a1)
            (f32x4.mul (v128.load offset=16 (local.get $c))
              (f32x4.add (v128.load offset=16 (local.get $lo))
                (i8x16.shuffle 12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3
                  (local.tee $m (v128.load offset=32 (local.get $hi))) (local.get $m))))))
          (local.set $a2 (f32x4.add (local.get $a2)
            (f32x4.mul (v128.load offset=32 (local.get $c))
              (f32x4.add (v128.load offset=32 (local.get $lo))
                (i8x16.shuffle 12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3
                  (local.tee $m (v128.load offset=16 (local.get $hi))) (local.get $m))))))
          (local.set $a3 (f32x4.add (local.get $a3)
            (f32x4.mul (v128.load offset=48 (local.get $c))
              (f32x4.add (v128.load offset=48 (local.get $lo))
                (i8x16.shuffle 12 13 14 15 8 9 10 11 4 5 6 7 0 1 2 3
                  (local.tee $m (v128.load (local.get $hi))) (local.get $m))))))
          (local.set $c (i32.add (local.get $c) (i32.const 64)))
          (local.set $lo (i32.add (local.get $lo) (i32.const 64)))
          (local.set $hi (i32.sub (local.get $hi) (i32.const 64)))
          (br_if $mac (i32.lt_u (local.get $c) (local.get $cEnd))))
        (f32.store (local.get $o)
          (f32.add
            (f32.add (f32x4.extract_lane 0 (local.tee $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1))
                                                                    (f32x4.add (local.get $a2) (local.get $a3)))))
                     (f32x4.extract_lane 1 (local.get $a0)))
            (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $o (i32.add (local.get $o) (i32.const 4)))
        (local.set $pos (i32.add (local.get $pos) (local.get $step)))
        (br $next)))
    (i32.store (i32.const 0) (local.get $pos))
    (local.set $o (i32.shr_u (i32.sub (local.get $o) (local.get $out)) (i32.const 2)))
    (if (local.get $pcm) (then (call $pcm16 (local.get $out) (local.get $pcm) (local.get $o))))
    (local.get $o))

  ;; Replaces non-finite floats in [$p, $p + 4·$n) by +0 and returns how many there were: the
  ;; Resampler copies a block into the history with one memcpy (Float32Array.set) and cleans it
  ;; here. Finite v has v - v = 0; NaN and ±Infinity give NaN, and the lane mask clears them.
  (func (export "sanitize") (param $p i32) (param $n i32) (result i32)
    (local $end i32) (local $vend i32) (local $v v128) (local $m v128) (local $finite v128) (local $bad i32)
    (local.set $end (i32.add (local.get $p) (i32.shl (local.get $n) (i32.const 2))))
    (local.set $vend (i32.add (local.get $p) (i32.shl (i32.and (local.get $n) (i32.const -4)) (i32.const 2))))
    (block $vdone
      (loop $vector
        (br_if $vdone (i32.ge_u (local.get $p) (local.get $vend)))
        (local.set $v (v128.load (local.get $p)))
        (local.set $m (f32x4.eq (f32x4.sub (local.get $v) (local.get $v)) (v128.const i32x4 0 0 0 0)))
        (v128.store (local.get $p) (v128.and (local.get $v) (local.get $m)))
        ;; A true lane is -1: $finite counts finite values, negated.
        (local.set $finite (i32x4.add (local.get $finite) (local.get $m)))
        (local.set $p (i32.add (local.get $p) (i32.const 16)))
        (br $vector)))
    (local.set $bad (i32.add (i32.and (local.get $n) (i32.const -4))
      (i32.add (i32.add (i32x4.extract_lane 0 (local.get $finite)) (i32x4.extract_lane 1 (local.get $finite)))
               (i32.add (i32x4.extract_lane 2 (local.get $finite)) (i32x4.extract_lane 3 (local.get $finite))))))
    (block $sdone
      (loop $scalar
        (br_if $sdone (i32.ge_u (local.get $p) (local.get $end)))
        (if (i32.eqz (f32.eq (f32.sub (f32.load (local.get $p)) (f32.load (local.get $p))) (f32.const 0)))
          (then
            (f32.store (local.get $p) (f32.const 0))
            (local.set $bad (i32.add (local.get $bad) (i32.const 1)))))
        (local.set $p (i32.add (local.get $p) (i32.const 4)))
        (br $scalar)))
    (local.get $bad))
;; Quantizes $n floats at $src to int16 at $dst (native order, little-endian in wasm) exactly as
  ;; pcm16.ts does: s = clamp(roundHalfAwayFromZero(x · 32768), -32768, 32767), NaN → 0.
  ;;   v = x · 32768                  exact (a power of two)
  ;;   w = v + copysign(H, v)         H = 0.5 - 2^-25, the float32 just below 0.5, rounded to f32
  ;;   s = saturate(trunc(w))         trunc_sat to i32 (NaN → 0), then the signed narrow to i16
  ;; Adding 0.5 itself would be wrong in f32 at |v| = 0.5 - 2^-25, where the sum rounds up to 1.
  ;; With H: a tie v = n + 0.5 gives n + 1 - 2^-25, which rounds to n + 1 (to even when it is exactly
  ;; halfway, at n = 0) and so truncates away from zero; any v with a fraction below 0.5 stays below
  ;; the next integer. Verified for all 2^32 float32 inputs against encodePcm16 when written (a one-off
  ;; run, too slow for a test); test/dsp/pcm16-fused.test.ts keeps comparing bytes. ±Infinity
  ;; saturates to the extremes. Eight samples per vector pass, then four, then one at a time.
  (func $pcm16 (export "pcm16") (param $src i32) (param $dst i32) (param $n i32)
    (local $end i32) (local $v v128) (local $w v128) (local $x f32) (local $i i32)
    (local.set $end (i32.add (local.get $src) (i32.shl (local.get $n) (i32.const 2))))
    (block $vdone
      (loop $vector
        (br_if $vdone (i32.gt_u (i32.add (local.get $src) (i32.const 32)) (local.get $end)))
        (local.set $v (f32x4.mul (v128.load (local.get $src)) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $w (f32x4.add (local.get $v)
          (v128.or (v128.and (local.get $v) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000))
                   (v128.const f32x4 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2))))
        (local.set $v (f32x4.mul (v128.load offset=16 (local.get $src)) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $v (f32x4.add (local.get $v)
          (v128.or (v128.and (local.get $v) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000))
                   (v128.const f32x4 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2))))
        (v128.store (local.get $dst)
          (i16x8.narrow_i32x4_s (i32x4.trunc_sat_f32x4_s (local.get $w)) (i32x4.trunc_sat_f32x4_s (local.get $v))))
        (local.set $src (i32.add (local.get $src) (i32.const 32)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 16)))
        (br $vector)))
    (if (i32.le_u (i32.add (local.get $src) (i32.const 16)) (local.get $end))
      (then
        (local.set $v (f32x4.mul (v128.load (local.get $src)) (v128.const f32x4 32768 32768 32768 32768)))
        (local.set $w (i32x4.trunc_sat_f32x4_s (f32x4.add (local.get $v)
          (v128.or (v128.and (local.get $v) (v128.const i32x4 0x80000000 0x80000000 0x80000000 0x80000000))
                   (v128.const f32x4 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2 0x1.fffffep-2)))))
        (v128.store64_lane 0 (local.get $dst) (i16x8.narrow_i32x4_s (local.get $w) (local.get $w)))
        (local.set $src (i32.add (local.get $src) (i32.const 16)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 8)))))
    (block $sdone
      (loop $scalar
        (br_if $sdone (i32.ge_u (local.get $src) (local.get $end)))
        (local.set $x (f32.mul (f32.load (local.get $src)) (f32.const 32768)))
        (local.set $i (i32.trunc_sat_f32_s (f32.add (local.get $x) (f32.copysign (f32.const 0x1.fffffep-2) (local.get $x)))))
        (local.set $i (select (local.get $i) (i32.const 32767) (i32.lt_s (local.get $i) (i32.const 32767))))
        (local.set $i (select (local.get $i) (i32.const -32768) (i32.gt_s (local.get $i) (i32.const -32768))))
        (i32.store16 (local.get $dst) (local.get $i))
        (local.set $src (i32.add (local.get $src) (i32.const 4)))
        (local.set $dst (i32.add (local.get $dst) (i32.const 2)))
        (br $scalar)))
  )
)
