/**
 * `Promise.withResolvers` for Node 20: libp2p 3.x calls it (identify, gossipsub, yamux, noise…)
 * and it only arrived in Node 22. Imported for its side effect before any libp2p module runs
 * (first import of `p2p/host.ts`, and jest's `setupFiles`). A no-op where the runtime has it.
 */
interface WithResolvers<T> {
  promise: Promise<T>;
  resolve: (value: T | PromiseLike<T>) => void;
  reject: (reason?: unknown) => void;
}

const P = Promise as unknown as { withResolvers?: <T>() => WithResolvers<T> };
if (typeof P.withResolvers !== 'function') {
  Object.defineProperty(Promise, 'withResolvers', {
    configurable: true,
    writable: true,
    enumerable: false,
    value: function withResolvers<T>(this: PromiseConstructor): WithResolvers<T> {
      let resolve!: WithResolvers<T>['resolve'];
      let reject!: WithResolvers<T>['reject'];
      const promise = new this<T>((res, rej) => {
        resolve = res;
        reject = rej;
      });
      return { promise, resolve, reject };
    },
  });
}

export {};
