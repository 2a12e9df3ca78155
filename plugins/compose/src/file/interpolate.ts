// A value of a compose file as the Compose program (and `docker stack deploy`) interpolates it from
// the variables the deploy gives it: `$$` is a `$`; `$VAR` and `${VAR}` the value ('' when unset);
// `${VAR:-word}` / `${VAR-word}` word when VAR is unset or empty / unset; `${VAR:+word}` /
// `${VAR+word}` word when VAR is set and not empty / set; `${VAR:?msg}` / `${VAR?msg}` an error
// when VAR is unset or empty / unset. The word is interpolated too (nesting, as Compose v2 does).
// Used to know which image a service will run before the program runs (its registry's login).

/** The interpolated value, or null when the program would refuse it (a `?` variable missing, a malformed `${`). */
export function interpolate(value: string, vars: Record<string, string>): string | null {
  const parsed = parse(value, 0, vars, false);
  return parsed && parsed.end === value.length ? parsed.text : null;
}

const NAME = /^[A-Za-z_][A-Za-z0-9_]*/;

/** Interpolates from `at` to the end, or (inBraces) to the `}` closing the current `${`, which `end` then names. */
function parse(s: string, at: number, vars: Record<string, string>, inBraces: boolean): { text: string; end: number } | null {
  let out = '';
  let i = at;
  while (i < s.length) {
    const c = s[i]!;
    if (inBraces && c === '}') return { text: out, end: i };
    if (c !== '$') {
      out += c;
      i++;
      continue;
    }
    const next = s[i + 1];
    if (next === '$') {
      out += '$';
      i += 2;
    } else if (next === '{') {
      const name = NAME.exec(s.slice(i + 2))?.[0];
      if (!name) return null;
      let j = i + 2 + name.length;
      const set = Object.hasOwn(vars, name);
      const value = set ? vars[name]! : '';
      if (s[j] === '}') {
        out += value;
        i = j + 1;
        continue;
      }
      const colon = s[j] === ':';
      if (colon) j++;
      const op = s[j];
      if (op !== '-' && op !== '+' && op !== '?') return null;
      const word = parse(s, j + 1, vars, true);
      if (!word) return null;
      const present = colon ? set && value !== '' : set;
      if (op === '-') out += present ? value : word.text;
      else if (op === '+') out += present ? word.text : '';
      else if (!present) return null;
      else out += value;
      i = word.end + 1;
    } else {
      const name = NAME.exec(s.slice(i + 1))?.[0];
      if (!name) {
        out += '$';
        i++;
        continue;
      }
      out += Object.hasOwn(vars, name) ? vars[name]! : '';
      i += 1 + name.length;
    }
  }
  return inBraces ? null : { text: out, end: i };
}
