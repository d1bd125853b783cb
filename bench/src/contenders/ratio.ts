/** in/out reduced to integers: `up` outputs per `down` inputs. */
export function reduce(inputRate: number, outputRate: number): { up: number; down: number } {
  let a = inputRate, b = outputRate;
  while (b !== 0) [a, b] = [b, a % b];
  return { up: outputRate / a, down: inputRate / a };
}
