/**
 * XML as events (start with attributes, text, end), replayed into any writer: the DataTable of a ReturnDatatable
 * (datatable-writer.ts) is written as text for the contract's `xml`, and by the bridge straight into binary XML.
 * Measured (a 2 000-row table through the bridge): writing the text and parsing it back into nodes took a third of
 * the bridge's time for the call, and most of its garbage. XmlTape records any events to replay them.
 *
 * Names are qualified names as written (`xs:element`, `xmlns:msdata`); values are unescaped.
 */
export interface XmlSink {
  /** `attributes` as name, value, name, value, ... in document order (namespace declarations among them). */
  start(name: string, attributes: readonly string[]): void;
  text(value: string): void;
  end(): void;
  /**
   * start(name, NO_ATTRIBUTES), text(value), end() in one: a DataTable's every cell, three calls through the sink and
   * the writer's bookkeeping of an element that could hold more (datatable-writer.ts).
   */
  leaf(name: string, value: string): void;
}

/** What can be replayed into a sink, as often as needed (an XmlTape, a DataTable's events). */
export interface XmlEventSource {
  replay(sink: XmlSink): void;
}

/** The attributes of an element that has none. */
export const NO_ATTRIBUTES: readonly string[] = Object.freeze([]);
const START = 0;
const TEXT = 1;
const END = 2;

/** Events kept in one flat array (an object per event would be most of the garbage of a large table). */
export class XmlTape implements XmlSink, XmlEventSource {
  private readonly events: (number | string)[] = [];

  start(name: string, attributes: readonly string[]): void {
    this.events.push(START, name, attributes.length);
    for (const part of attributes) this.events.push(part);
  }

  text(value: string): void {
    this.events.push(TEXT, value);
  }

  end(): void {
    this.events.push(END);
  }

  leaf(name: string, value: string): void {
    this.events.push(START, name, 0, TEXT, value, END);
  }

  replay(sink: XmlSink): void {
    const events = this.events;
    for (let at = 0; at < events.length; ) {
      const kind = events[at++];
      if (kind === START) {
        const name = events[at++] as string;
        const count = events[at++] as number;
        sink.start(name, count === 0 ? NO_ATTRIBUTES : (events.slice(at, at + count) as string[]));
        at += count;
      } else if (kind === TEXT) {
        sink.text(events[at++] as string);
      } else {
        sink.end();
      }
    }
  }
}
