/**
 * Lays out JSON text again without parsing it into values, so numbers keep the digits they were written with (a
 * client's references may hold integers beyond 2^53, which the API echoes as sent). The text must be valid JSON.
 *
 * `indent` 0 gives one line with no whitespace outside strings (a JSON Lines record); more gives the layout of
 * `JSON.stringify(value, null, indent)`.
 */
export function layoutJson(text: string, indent = 0): string {
  let out = '';
  let depth = 0;
  const newline = () => (indent > 0 ? `\n${' '.repeat(depth * indent)}` : '');
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    switch (c) {
      case '"': {
        const end = stringEnd(text, i);
        out += text.slice(i, end);
        i = end - 1;
        break;
      }
      case ' ':
      case '\t':
      case '\n':
      case '\r':
        break;
      case '{':
      case '[': {
        const next = skipSpace(text, i + 1);
        if (text[next] === (c === '{' ? '}' : ']')) {
          out += c + text[next];
          i = next;
        } else {
          depth++;
          out += c + newline();
        }
        break;
      }
      case '}':
      case ']':
        depth--;
        out += newline() + c;
        break;
      case ',':
        out += `,${newline()}`;
        break;
      case ':':
        out += indent > 0 ? ': ' : ':';
        break;
      default:
        out += c;
    }
  }
  return out;
}

/** Index just after the closing quote of the string starting at `start`. */
function stringEnd(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i + 1;
  }
  return text.length;
}

function skipSpace(text: string, i: number): number {
  while (text[i] === ' ' || text[i] === '\t' || text[i] === '\n' || text[i] === '\r') i++;
  return i;
}
