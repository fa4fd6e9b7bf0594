/**
 * A decoded request envelope → the service call → the reply envelope. Every outcome is a reply: a result, the
 * contract's fault, or the SOAP fault WCF would send for a malformed message, so the client always gets an answer
 * related to its MessageID and the channel stays usable ("A fault never ends the session").
 */
import { type Caller, IdbFault, type IdbService, type Logger, type OperationName } from '#idb';
import type { XmlDocument } from './binary-xml/index.ts';
import type { Dispatch } from './streams.ts';
import { readRequest, SoapFault, writeFault, writeReply, type SoapOptions, type SoapRequest } from './soap/index.ts';

export function soapDispatch(service: IdbService, options: SoapOptions & { logger: Logger }): Dispatch {
  const { logger } = options;
  return async (document: XmlDocument, caller: Caller): Promise<XmlDocument> => {
    let request: SoapRequest;
    try {
      request = readRequest(document, options);
    } catch (error) {
      if (error instanceof SoapFault) {
        logger.log('info', 'message refused', { code: error.code, subcode: error.subcode?.name });
        return writeFault(undefined, error, options);
      }
      logger.log('error', 'message could not be read', { error: String(error) });
      return writeFault(undefined, new IdbFault('InternalError', 'The service could not read the message.'), options);
    }
    return answer(request);

    async function answer<K extends OperationName>(call: SoapRequest<K>): Promise<XmlDocument> {
      const started = performance.now();
      let outcome = 'ok';
      try {
        const result = await service.call(call.operation, caller, call.args);
        return writeReply(call, call.operation, result, options);
      } catch (error) {
        const fault = error instanceof IdbFault ? error : new IdbFault('InternalError', 'The service failed to complete the operation.');
        if (!(error instanceof IdbFault)) logger.log('error', 'reply could not be written', { operation: call.operation, error: String(error) });
        outcome = fault.fault;
        return writeFault(call, fault, options);
      } finally {
        // Never the arguments: SQL and files are the customer's.
        logger.log('debug', 'call', { operation: call.operation, caller: caller.name, outcome, ms: Math.round((performance.now() - started) * 10) / 10 });
      }
    }
  };
}
