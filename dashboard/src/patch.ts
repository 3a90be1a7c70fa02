import { append, type Child, handlersOf, setHandlers } from './h.ts';

/**
 * Replaces what `el` holds as `mount` does, but in place: each new node takes over the old node it
 * matches — by `data-key` (a table row's id), else the next old node of the same tag — which keeps
 * its identity and so what the developer did to it: focus, text selection, sideways scroll, an open
 * `<details>`, a half-typed field. Only what differs is written. Polling views refresh with it, so a
 * list that gains rows every two seconds never moves the place you are at.
 */
export function patch(el: Element, ...children: Child[]): void {
  const next = document.createElement('div');
  append(next, children);
  patchChildren(el, next);
}

function keyOf(node: Node): string | null {
  return node instanceof Element ? node.getAttribute('data-key') : null;
}

function sameKind(a: Node, b: Node): boolean {
  if (a.nodeType !== b.nodeType) return false;
  if (!(a instanceof Element) || !(b instanceof Element)) return true;
  return a.tagName === b.tagName && a.getAttribute('type') === b.getAttribute('type');
}

function patchChildren(from: Node, to: Node): void {
  const wanted = [...to.childNodes];
  const old = [...from.childNodes];
  const byKey = new Map<string, Node>();
  for (const node of old) {
    const key = keyOf(node);
    if (key !== null) byKey.set(key, node);
  }
  const used = new Set<Node>();
  let scan = 0;
  const pairs = wanted.map((node): [Node, Node | undefined] => {
    const key = keyOf(node);
    let match: Node | undefined;
    if (key !== null) {
      const candidate = byKey.get(key);
      if (candidate && !used.has(candidate) && sameKind(candidate, node)) match = candidate;
    } else {
      // The next unkeyed old node of the same kind, in order (a skipped one may still match a later node).
      for (let i = scan; i < old.length; i++) {
        const candidate = old[i]!;
        if (used.has(candidate) || keyOf(candidate) !== null || !sameKind(candidate, node)) continue;
        match = candidate;
        if (i === scan) scan++;
        break;
      }
    }
    if (match) used.add(match);
    return [node, match];
  });
  // Removed first, so that what stays keeps its order and is never moved (moving a node blurs it).
  for (const node of old) if (!used.has(node)) from.removeChild(node);
  let cursor = from.firstChild;
  for (const [node, match] of pairs) {
    if (!match) {
      from.insertBefore(node, cursor);
      continue;
    }
    morph(match, node);
    if (match === cursor) cursor = cursor.nextSibling;
    else from.insertBefore(match, cursor);
  }
}

function morph(old: Node, next: Node): void {
  if (!(old instanceof Element) || !(next instanceof Element)) {
    if (old.nodeValue !== next.nodeValue) old.nodeValue = next.nodeValue;
    return;
  }
  for (const { name, value } of [...next.attributes]) {
    if (old.tagName === 'DETAILS' && name === 'open') continue;
    if (old.getAttribute(name) !== value) old.setAttribute(name, value);
  }
  for (const { name } of [...old.attributes]) {
    // An open <details> is the developer's doing: it stays open.
    if (old.tagName === 'DETAILS' && name === 'open') continue;
    if (!next.hasAttribute(name)) old.removeAttribute(name);
  }
  const on = handlersOf(next);
  if (on) setHandlers(old, on);
  const focused = old === document.activeElement;
  if (old instanceof HTMLTextAreaElement) {
    if (!focused && old.value !== (next as HTMLTextAreaElement).value) old.value = (next as HTMLTextAreaElement).value;
    return;
  }
  patchChildren(old, next);
  // Properties that attributes do not carry; a field being typed in keeps what is typed.
  if (old instanceof HTMLInputElement && !focused) {
    const input = next as HTMLInputElement;
    if (old.value !== input.value) old.value = input.value;
    old.checked = input.checked;
  } else if (old instanceof HTMLOptionElement) {
    old.selected = (next as HTMLOptionElement).selected;
  } else if (old instanceof HTMLSelectElement && !focused && old.value !== (next as HTMLSelectElement).value) {
    old.value = (next as HTMLSelectElement).value;
  }
}
