// The fault proxy lives with the reference service, so the half-open benchmark uses the same one.
export { ChaosProxy } from '@soundclone/server';
