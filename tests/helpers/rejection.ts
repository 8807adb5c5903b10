/**
 * The one helper for "this must fail, and with what": resolves to the error a promise rejects
 * with, so a test can assert on it (class, code, params, message).
 */

/**
 * The error `promise` rejects with.
 * @throws `Error('did not fail')` when `promise` resolves, which fails the test awaiting it (a
 *   resolved value is never handed back as if it were the error).
 */
export const rejection = (promise: Promise<unknown>): Promise<unknown> =>
  promise.then(
    () => {
      throw new Error('did not fail');
    },
    (error: unknown) => error,
  );
