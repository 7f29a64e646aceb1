/** Lets the event loop run what is waiting (requests, deliveries) before a long loop goes on. */
export const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));
