/**
 * The shapes the SOAP layer reads and writes, taken from the core (src/idb/contract-shapes.ts) so the wire cannot
 * drift from what the WSDL publishes.
 */
export {
  CLASSES,
  DEFAULTS,
  SIGNATURES,
  isArray,
  isClass,
  isValueType,
  itemOf,
  type ArrayName,
  type ClassName,
  type DcType,
  type Members,
  type SimpleName,
} from '#idb';
