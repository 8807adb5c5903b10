;; The vector scan's WebAssembly SIMD kernels (source of `scan-wasm.ts`; rebuild with
;; `npx tsx scripts/build-scan-kernel.ts`, checked by `tests/unit/ltm-scan-kernel.test.ts`).
;; The memory is imported (`env.memory`): the caller (`./mirror.ts`) owns the layout.
(module
  (import "env" "memory" (memory 1))

  ;; Score bounds of one block of int8 codes against an i16 query (see `./quantize.ts`).
  ;; For slot s in [0, n):
  ;;   codes  at $codes + s*$stride   ($stride bytes of i8, a multiple of 16, zero-padded)
  ;;   meta   at $meta  + s*12        (f32 scale, f32 errNorm, f32 codeNorm)
  ;;   out    at $out   + s*8         (f32 lo, f32 hi)
  ;; query at $q ($stride i16).  D = sum_i code_i * q_i (exact in i32 for the caller's ranges);
  ;;   approx = scale * $qscale * D;  err = $qerr * codeNorm + $qnorm * errNorm + $slack;
  ;;   lo = approx - err;  hi = approx + err   (computed in f64, stored as f32).
  (func (export "bounds")
    (param $codes i32) (param $meta i32) (param $out i32) (param $n i32) (param $stride i32)
    (param $q i32) (param $qscale f64) (param $qnorm f64) (param $qerr f64) (param $slack f64)
    (local $s i32) (local $c i32) (local $p i32) (local $end i32)
    (local $acc0 v128) (local $acc1 v128) (local $x v128)
    (local $d i32) (local $approx f64) (local $err f64)
    (block $done
      (loop $slots
        (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
        (local.set $c (i32.add (local.get $codes) (i32.mul (local.get $s) (local.get $stride))))
        (local.set $end (i32.add (local.get $c) (local.get $stride)))
        (local.set $p (local.get $q))
        (local.set $acc0 (v128.const i32x4 0 0 0 0))
        (local.set $acc1 (v128.const i32x4 0 0 0 0))
        (block $vdone
          (loop $dims
            (br_if $vdone (i32.ge_u (local.get $c) (local.get $end)))
            (local.set $x (v128.load (local.get $c)))
            (local.set $acc0 (i32x4.add (local.get $acc0)
              (i32x4.dot_i16x8_s (i16x8.extend_low_i8x16_s (local.get $x)) (v128.load (local.get $p)))))
            (local.set $acc1 (i32x4.add (local.get $acc1)
              (i32x4.dot_i16x8_s (i16x8.extend_high_i8x16_s (local.get $x)) (v128.load offset=16 (local.get $p)))))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (local.set $p (i32.add (local.get $p) (i32.const 32)))
            (br $dims)))
        (local.set $acc0 (i32x4.add (local.get $acc0) (local.get $acc1)))
        (local.set $d (i32.add
          (i32.add (i32x4.extract_lane 0 (local.get $acc0)) (i32x4.extract_lane 1 (local.get $acc0)))
          (i32.add (i32x4.extract_lane 2 (local.get $acc0)) (i32x4.extract_lane 3 (local.get $acc0)))))
        (local.set $approx (f64.mul
          (f64.mul (f64.promote_f32 (f32.load (local.get $meta))) (local.get $qscale))
          (f64.convert_i32_s (local.get $d))))
        (local.set $err (f64.add (local.get $slack) (f64.add
          (f64.mul (local.get $qerr) (f64.promote_f32 (f32.load offset=8 (local.get $meta))))
          (f64.mul (local.get $qnorm) (f64.promote_f32 (f32.load offset=4 (local.get $meta)))))))
        (f32.store (local.get $out) (f32.demote_f64 (f64.sub (local.get $approx) (local.get $err))))
        (f32.store offset=4 (local.get $out) (f32.demote_f64 (f64.add (local.get $approx) (local.get $err))))
        (local.set $meta (i32.add (local.get $meta) (i32.const 12)))
        (local.set $out (i32.add (local.get $out) (i32.const 8)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $slots))))

  ;; Int8 codes of n f32 vectors (see `./quantize.ts`), dim a multiple of 16. For vector s:
  ;;   src    at $src   + s*dim*4   (dim f32)
  ;;   codes  at $codes + s*$stride (dim i8 written; the padding up to $stride is left as it is)
  ;;   meta   at $meta  + s*12      (f32 scale, f32 errNorm, f32 codeNorm written)
  ;; scale = f32(max|v_i| / 127) (the quotient in f64, then rounded once to f32);
  ;; c_i = nearest(f32(v_i / scale)) (ties to even), so |v_i - scale*c_i| <= scale * (1/2 + 2^-16);
  ;; errNorm = up(scale * (1/2 + 2^-12) * sqrt(dim)) >= ||v - scale*c||_2;
  ;; codeNorm = up(scale * sqrt(sum c_i^2)) (the sum exact in i32); up(x) = f32(x * (1 + 2^-20)) >= x.
  ;; The zero vector gets zero codes and constants.
  (func (export "encode")
    (param $src i32) (param $n i32) (param $dim i32) (param $codes i32) (param $stride i32) (param $meta i32)
    (local $s i32) (local $p i32) (local $end i32) (local $c i32)
    (local $m v128) (local $sv v128) (local $sq v128) (local $lo v128) (local $hi v128)
    (local $max f32) (local $scale f32) (local $sum i32)
    (block $done
      (loop $vectors
        (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
        (local.set $p (local.get $src))
        (local.set $end (i32.add (local.get $src) (i32.shl (local.get $dim) (i32.const 2))))
        (local.set $c (local.get $codes))
        ;; max |v_i|
        (local.set $m (v128.const f32x4 0 0 0 0))
        (block $mdone
          (loop $mloop
            (br_if $mdone (i32.ge_u (local.get $p) (local.get $end)))
            (local.set $m (f32x4.max (local.get $m) (f32x4.abs (v128.load (local.get $p)))))
            (local.set $p (i32.add (local.get $p) (i32.const 16)))
            (br $mloop)))
        (local.set $max (f32.max
          (f32.max (f32x4.extract_lane 0 (local.get $m)) (f32x4.extract_lane 1 (local.get $m)))
          (f32.max (f32x4.extract_lane 2 (local.get $m)) (f32x4.extract_lane 3 (local.get $m)))))
        (local.set $scale (f32.demote_f64 (f64.div (f64.promote_f32 (local.get $max)) (f64.const 127))))
        (local.set $sv (f32x4.splat (local.get $scale)))
        (local.set $sq (v128.const i32x4 0 0 0 0))
        (local.set $p (local.get $src))
        (block $cdone
          (loop $cloop
            (br_if $cdone (i32.ge_u (local.get $p) (local.get $end)))
            (if (f32.gt (local.get $scale) (f32.const 0))
              (then
                (local.set $lo (i16x8.narrow_i32x4_s
                  (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div (v128.load (local.get $p)) (local.get $sv))))
                  (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div (v128.load offset=16 (local.get $p)) (local.get $sv))))))
                (local.set $hi (i16x8.narrow_i32x4_s
                  (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div (v128.load offset=32 (local.get $p)) (local.get $sv))))
                  (i32x4.trunc_sat_f32x4_s (f32x4.nearest (f32x4.div (v128.load offset=48 (local.get $p)) (local.get $sv)))))))
              (else
                (local.set $lo (v128.const i32x4 0 0 0 0))
                (local.set $hi (v128.const i32x4 0 0 0 0))))
            ;; |c_i| <= 127 already (|v_i| / scale <= 127 * (1 + 2^-23)): the narrowing never saturates.
            (v128.store (local.get $c) (i8x16.narrow_i16x8_s (local.get $lo) (local.get $hi)))
            (local.set $sq (i32x4.add (local.get $sq)
              (i32x4.add (i32x4.dot_i16x8_s (local.get $lo) (local.get $lo)) (i32x4.dot_i16x8_s (local.get $hi) (local.get $hi)))))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))
            (local.set $c (i32.add (local.get $c) (i32.const 16)))
            (br $cloop)))
        (local.set $sum (i32.add
          (i32.add (i32x4.extract_lane 0 (local.get $sq)) (i32x4.extract_lane 1 (local.get $sq)))
          (i32.add (i32x4.extract_lane 2 (local.get $sq)) (i32x4.extract_lane 3 (local.get $sq)))))
        (f32.store (local.get $meta) (local.get $scale))
        (f32.store offset=4 (local.get $meta) (f32.demote_f64 (f64.mul (f64.const 1.00000095367431640625)
          (f64.mul (f64.mul (f64.promote_f32 (local.get $scale)) (f64.const 0.500244140625)) (f64.sqrt (f64.convert_i32_u (local.get $dim)))))))
        (f32.store offset=8 (local.get $meta) (f32.demote_f64 (f64.mul (f64.const 1.00000095367431640625)
          (f64.mul (f64.promote_f32 (local.get $scale)) (f64.sqrt (f64.convert_i32_u (local.get $sum)))))))
        (local.set $src (local.get $end))
        (local.set $codes (i32.add (local.get $codes) (local.get $stride)))
        (local.set $meta (i32.add (local.get $meta) (i32.const 12)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $vectors))))

  ;; Exact f32 dot products (f32x4, four accumulators): out[s] = sum_i data[s*dim + i] * q[i] for
  ;; s in [0, n); dim a multiple of 16; f32 arithmetic. The bench's "WASM f32x4 over one contiguous
  ;; array" row (the alternative to the int8 pass, measured, not used by the index).
  (func (export "dotsF32")
    (param $data i32) (param $n i32) (param $dim i32) (param $q i32) (param $out i32)
    (local $s i32) (local $c i32) (local $p i32) (local $end i32)
    (local $a0 v128) (local $a1 v128) (local $a2 v128) (local $a3 v128)
    (block $done
      (loop $slots
        (br_if $done (i32.ge_u (local.get $s) (local.get $n)))
        (local.set $end (i32.add (local.get $data) (i32.shl (local.get $dim) (i32.const 2))))
        (local.set $p (local.get $q))
        (local.set $a0 (v128.const f32x4 0 0 0 0))
        (local.set $a1 (v128.const f32x4 0 0 0 0))
        (local.set $a2 (v128.const f32x4 0 0 0 0))
        (local.set $a3 (v128.const f32x4 0 0 0 0))
        (block $vdone
          (loop $dims
            (br_if $vdone (i32.ge_u (local.get $data) (local.get $end)))
            (local.set $a0 (f32x4.add (local.get $a0) (f32x4.mul (v128.load (local.get $data)) (v128.load (local.get $p)))))
            (local.set $a1 (f32x4.add (local.get $a1) (f32x4.mul (v128.load offset=16 (local.get $data)) (v128.load offset=16 (local.get $p)))))
            (local.set $a2 (f32x4.add (local.get $a2) (f32x4.mul (v128.load offset=32 (local.get $data)) (v128.load offset=32 (local.get $p)))))
            (local.set $a3 (f32x4.add (local.get $a3) (f32x4.mul (v128.load offset=48 (local.get $data)) (v128.load offset=48 (local.get $p)))))
            (local.set $data (i32.add (local.get $data) (i32.const 64)))
            (local.set $p (i32.add (local.get $p) (i32.const 64)))
            (br $dims)))
        (local.set $a0 (f32x4.add (f32x4.add (local.get $a0) (local.get $a1)) (f32x4.add (local.get $a2) (local.get $a3))))
        (f32.store (local.get $out) (f32.add
          (f32.add (f32x4.extract_lane 0 (local.get $a0)) (f32x4.extract_lane 1 (local.get $a0)))
          (f32.add (f32x4.extract_lane 2 (local.get $a0)) (f32x4.extract_lane 3 (local.get $a0)))))
        (local.set $out (i32.add (local.get $out) (i32.const 4)))
        (local.set $s (i32.add (local.get $s) (i32.const 1)))
        (br $slots))))
)
