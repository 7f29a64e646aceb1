/** A sensitive value in each form a corpus stores it (shared/sensitive.ts): a secret (rendered as its marker), one from the host's environment, one not secret. */
export const SECRET = { secret: "0190a8c2-7b3e-7c41-9d2e-5f6a7b8c9d01" };
export const FROM_HOST = { env: "TOKEN" };
export const plain = (value: string) => ({ value, secret: false });
