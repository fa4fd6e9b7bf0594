export * from './records.ts';
export * from './faults.ts';
export * from './writer.ts';
export * from './decoder.ts';
export * from './client-decoder.ts';
