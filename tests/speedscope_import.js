// speedscope_import.js - import a file with speedscope's own importer (the
// code the speedscope page runs on a dropped file) and print what it made
// of it, one fact a line, for tests/functional/speedscope.sh to check.
//
//   node tests/speedscope_import.js MODULES FILE
//
// MODULES is a node_modules directory holding speedscope, jsdom and ajv
// (installed by the test into a cache outside the repository). speedscope
// ships only its built page: one script that runs the app, with the
// importer inside it. The script runs here in jsdom (it needs a window),
// with one line added after the statement that starts loading the importer
// module, handing that module out; the file is then imported with its
// importProfilesFromArrayBuffer, as the page does. The file is also
// validated against the schema the package ships.
//
// Output (tab-separated):
//   schema   ok | <errors>
//   log      <each console.log line of the importer>
//   group    <the profile group's name>
//   profile  <index> <name> <unit> <total weight> <weights in the file>
//   frame    <profile> <name> <file> <line> <self weight> <total weight>
//   root     <profile> <outermost frame> <weight>
//   edge     <profile> <outermost frame> <caller> <callee> <weight>
'use strict';
const fs = require('fs');
const path = require('path');

const [modules, file] = process.argv.slice(2);
const req = (m) => require(path.join(modules, m));
const {JSDOM, VirtualConsole} = req('jsdom');
const Ajv = req('ajv');
const out = (...f) => console.log(f.join('\t'));

const release = path.join(modules, 'speedscope', 'dist', 'release');
const bytes = fs.readFileSync(file);

// The schema, as speedscope publishes it.
const schema = JSON.parse(fs.readFileSync(path.join(release, 'file-format-schema.json'), 'utf8'));
const validate = new Ajv({strict: false}).compile(schema);
let doc;
try {
    doc = JSON.parse(bytes.toString('utf8'));
} catch (e) {
    out('schema', 'not JSON: ' + e.message);
}
if (doc !== undefined)
    out('schema', validate(doc) ? 'ok' : JSON.stringify(validate.errors).slice(0, 500));

// The app's script, named in its index.html.
const html = fs.readFileSync(path.join(release, 'index.html'), 'utf8');
const script = html.match(/<script src="(speedscope-[^"]+\.js)"/);
if (!script)
    throw new Error('no speedscope script in ' + release + '/index.html');
let src = fs.readFileSync(path.join(release, script[1]), 'utf8');
// The app imports through `(await M).importProfilesFromArrayBuffer(...)`
// where M is a promise of the importer module, made at top level.
const use = src.match(/\(await ([\w$]+)\)\.importProfilesFromArrayBuffer\(/);
const decl = use && src.match(new RegExp('var ' + use[1].replace(/\$/g, '\\$') + '=[^;]*;'));
if (!decl)
    throw new Error('cannot find the importer module in ' + script[1]);
src = src.replace(decl[0], decl[0] + 'window.__hsspyImporter=' + use[1] + ';');

const logs = [];
const console_ = new VirtualConsole();
console_.on('log', (...a) => logs.push(a.join(' ')));
const dom = new JSDOM('<!DOCTYPE html><html><head></head><body></body></html>', {
    runScripts: 'outside-only',
    url: 'http://localhost/',
    pretendToBeVisual: true,
    virtualConsole: console_,
});
const w = dom.window;
// What jsdom lacks and the app touches while it starts; it draws nothing
// here (no WebGL), which the import does not need.
Object.assign(w, {
    TextDecoder, TextEncoder,
    matchMedia: () => ({matches: false, addEventListener() {}, removeEventListener() {},
                        addListener() {}, removeListener() {}}),
});
w.HTMLCanvasElement.prototype.getContext = () => null;
try {
    w.eval(src);
} catch (e) {
    // The app's own start-up may fail without a real browser; the importer
    // is already handed out by then.
}
if (!w.__hsspyImporter)
    throw new Error('the importer module was not handed out');

(async () => {
    const importer = await w.__hsspyImporter;
    const buf = bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.length);
    const group = await importer.importProfilesFromArrayBuffer(path.basename(file), buf);
    for (const l of logs)
        out('log', l);
    if (!group) {
        out('group', '(not imported)');
        return;
    }
    out('group', group.name);
    group.profiles.forEach((p, i) => {
        const file = doc && doc.profiles && doc.profiles[i];
        const weights = file && file.weights ? file.weights.reduce((a, b) => a + b, 0) : '';
        out('profile', i, p.getName(), p.getWeightUnit(), p.getTotalWeight(), weights);
        p.forEachFrame((f) => {
            if (f.getTotalWeight() > 0)
                out('frame', i, f.name, f.file || '', f.line || '', f.getSelfWeight(),
                    f.getTotalWeight());
        });
        // The call tree (all samples merged, as the left-heavy view): its
        // outermost frames, and each caller -> callee edge under them.
        const edges = new Map();
        const walk = (node, root) => {
            for (const c of node.children) {
                if (!root)
                    out('root', i, c.frame.name, c.getTotalWeight());
                const r = root || c.frame.name;
                if (root) {
                    const k = [r, node.frame.name, c.frame.name].join('\t');
                    edges.set(k, (edges.get(k) || 0) + c.getTotalWeight());
                }
                walk(c, r);
            }
        };
        walk(p.getGroupedCalltreeRoot(), null);
        for (const [k, v] of edges)
            out('edge', i, k, v);
    });
})().catch((e) => {
    out('error', e && e.stack ? e.stack.split('\n')[0] : String(e));
    process.exitCode = 1;
});
