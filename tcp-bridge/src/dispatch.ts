/**
 * A request envelope (read straight from its bytes, soap/request-cursor.ts, or decoded into a tree, readRequest) → the
 * service call → the reply envelope. Every outcome is a reply: a result, the contract's fault, or the SOAP fault WCF
 * would send for a malformed message, so the client always gets an answer related to its MessageID and the channel
 * stays usable ("A fault never ends the session").
 *
 * Each call writes one audit line (`call`, level info): connection, identity, operation, outcome (`ok` or the fault's
 * name), duration and database request; never SQL text, parameter values or file contents.
 */
import { type Caller, EMPTY_GUID, IdbFault, type IdbService, type Logger, type OperationName } from '#idb';
import type { XmlDocument } from './binary-xml/index.ts';
import type { BridgeObserver, Dispatch } from './streams.ts';
import { readRequestBytes } from './soap/request-cursor.ts';
import { readRequest, SoapFault, writeFault, writeReply, type SoapOptions, type SoapRequest } from './soap/index.ts';

export function soapDispatch(
  service: IdbService,
  options: SoapOptions & { logger: Logger; observer: BridgeObserver },
): Dispatch<SoapRequest> {
  const { logger, observer } = options;
  // Not async itself: the request is read synchronously and answer's promise is returned as it is, not wrapped in
  // another one (each wrapping costs the call extra microtask hops).
  const answerReceived = (received: XmlDocument | SoapRequest, caller: Caller): Promise<XmlDocument> => {
    let request: SoapRequest;
    try {
      request = 'operation' in received ? received : readRequest(received, options);
    } catch (error) {
      return refused(error);
    }
    return answer(request);

    /** A message that is no call of the contract: the fault WCF would send. Async, so a throw here is a rejection. */
    async function refused(error: unknown): Promise<XmlDocument> {
      if (error instanceof SoapFault) {
        logger.log('info', 'message refused', { code: error.code, subcode: error.subcode?.name });
        return writeFault(undefined, error, options);
      }
      logger.log('error', 'message could not be read', { error: String(error) });
      return writeFault(undefined, new IdbFault('InternalError', 'The service could not read the message.'), options);
    }

    async function answer<K extends OperationName>(call: SoapRequest<K>): Promise<XmlDocument> {
      const started = performance.now();
      let outcome = 'ok';
      let databaseRequest = 'requestId' in call.args ? (call.args.requestId as string) : undefined;
      try {
        const result = await service.call(call.operation, caller, call.args);
        if (call.operation === 'CreateDatabaseRequest') databaseRequest = result as string;
        return writeReply(call, call.operation, result, options);
      } catch (error) {
        const fault =
          error instanceof IdbFault
            ? error
            : new IdbFault('InternalError', 'The service failed to complete the operation.');
        if (!(error instanceof IdbFault))
          logger.log('error', 'reply could not be written', { operation: call.operation, error: String(error) });
        outcome = fault.fault;
        return writeFault(call, fault, options);
      } finally {
        const seconds = (performance.now() - started) / 1000;
        observer.call(call.operation, outcome, seconds);
        const fields: Record<string, unknown> = {
          connectionId: caller.connectionId,
          caller: caller.name,
          operation: call.operation,
          outcome,
          ms: Math.round(seconds * 10_000) / 10,
        };
        // Set, not spread in: this line is written for every call.
        if (databaseRequest !== undefined && databaseRequest !== EMPTY_GUID) fields.databaseRequest = databaseRequest;
        logger.log('info', 'call', fields);
      }
    }
  };
  return {
    answer: answerReceived,
    // Requests in the shape every WCF client sends are read straight from their bytes (soap/request-cursor.ts).
    read: (document, session) => readRequestBytes(document, { serviceNamespace: options.serviceNamespace, session }),
  };
}
