/** The code of the ValidationError `fn` throws, or undefined when it returns; other errors pass through. */
import { ValidationError } from '../../consensus/errors.js';

export function codeOf(fn: () => unknown): string | undefined {
  try {
    fn();
  } catch (e) {
    if (e instanceof ValidationError) return e.code;
    throw e;
  }
  return undefined;
}
