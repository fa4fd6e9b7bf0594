export * from './errors.ts';
export * from './records.ts';
export * from './nodes.ts';
export * from './values.ts';
export * from './dictionary.ts';
export * from './reader.ts';
export * from './writer.ts';
export * from './envelope.ts';
