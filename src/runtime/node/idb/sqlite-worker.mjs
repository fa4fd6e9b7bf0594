// Worker threads start without the parent's TypeScript loader: register tsx here, then load the worker body.
import { register } from 'tsx/esm/api';

register();
await import('./sqlite-worker.ts');
