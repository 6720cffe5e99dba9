# svg - `record -f svg` on the bundled GHC demo: a well-formed, self-contained
# flame graph with the tag frames and known functions in their tag's colour
# family, whose script runs in a real browser (zoom and search, driven by the
# URL fragment), and that renders to a picture of many colours, the tags'
# among them. A C program gets the warm palette; a terminal is refused.
#
# The SVG and the screenshot are kept in build/test-out/svg/ to be looked at.
. "$(dirname "$0")/../lib.sh"
require_ptrace

out=$ROOT/build/test-out/svg
mkdir -p "$out" && rm -f "$out"/*

# xp FILE XPATH: evaluate an XPath 1.0 expression (elements by local name:
# the document is in the SVG namespace).
xp() { xmllint --xpath "$2" "$1" 2>/dev/null; }
# The frames (<g>) whose name (first line of their title) is NAME.
frames_named() { printf '//*[local-name()="g"][substring-before(*[local-name()="title"], "\n") = "%s"]' "$1"; }

prog=$(build_hs demo demo.hs demo_c.c -- -O1 -g -threaded -rtsopts) ||
    { fail "build" "ghc could not build demo.hs"; exit 0; }

svg=$out/demo.svg
"$HSSPY" record -q -F 199 -f svg -o "$svg" -- "$prog" 2 +RTS -N2 -RTS 2>"$T/err"
check_status "exit-status" $? "$T/err"

if xmllint --noout "$svg" 2>"$T/xml"; then
    pass "well-formed"
else
    fail "well-formed" "xmllint: $(head -n3 "$T/xml" | tr '\n' '|')"
fi

# Nothing outside the file: no links, no fetched resources (the namespace
# names are identifiers, not fetched).
ext=$(grep -E -o "(href|src)=|url\\(|@import|https?://[^\"' )]*" "$svg" | grep -v -x -E 'http://www\.w3\.org/(2000/svg|1999/xhtml)' | sort -u | tr '\n' ' ')
check "self-contained" "external references: $ext" test -z "$ext"

check "header-target" "no 'hsspy: pid N: CMD' title" \
    grep -q ">hsspy: pid [0-9]*: $prog 2 +RTS -N2 -RTS<" "$svg"
check "header-health" "no runtime, duration, rate and ticks in the header" \
    grep -E -q ">GHC 9\.0\.2, [0-9.]+ s; rate 199 Hz asked, [0-9.]+ Hz achieved; [0-9]+ ticks, [0-9]+ missed<" "$svg"
check "header-pause" "no pause and errors in the header" \
    grep -E -q ">pause per stopped thread: mean [0-9.]+ µs, max [0-9.]+ µs; errors: [0-9]+" "$svg"

# Each tag frame, in its own colour family; the functions under their tag.
for tag in haskell unsafe-ffi safe-ffi gc; do
    n=$(xp "$svg" "count($(frames_named "[$tag]")[@class=\"f t-$tag\"])")
    check "tag-frame-$tag" "no [$tag] frame of class t-$tag (found $n)" test "${n:-0}" = 1
done
for fn in Main.nfib:haskell demo_checksum:unsafe-ffi; do
    name=${fn%%:*} tag=${fn#*:}
    n=$(xp "$svg" "sum($(frames_named "$name")[@class=\"f t-$tag\"]/@data-n)")
    total=$(xp "$svg" 'string(/*/@data-total)')
    # Each is a fifth to a third of the demo's samples: a twentieth is no
    # stray sample.
    check "function-$name" "$name has ${n:-0} of $total samples in t-$tag frames" \
        test "${n:-0}" -gt $((total / 20))
done

CHROMIUM=""
for c in chromium chromium-browser; do command -v "$c" >/dev/null && { CHROMIUM=$c; break; }; done
if [ -z "$CHROMIUM" ]; then
    why="chromium is not installed (tests/deps.sh could not install it)"
    skip "browser-script" "$why"; skip "screenshot" "$why"
else
    # Headless, no network, no state kept; as root it needs --no-sandbox.
    browser() {
        timeout 30 "$CHROMIUM" --headless --no-sandbox --disable-gpu --disable-quic --no-first-run \
            --disable-background-networking --disable-component-update --disable-sync \
            --disable-dev-shm-usage --enable-logging=stderr --user-data-dir="$(mktemp -d "$T/profile.XXXXXX")" "$@" \
            2>>"$T/chromium.err"
    }

    # The script on load: search ^Main\.nfib$ and zoom into [unsafe-ffi]; the
    # DOM after it ran tells what it did.
    browser --dump-dom "file://$svg#search=%5EMain%5C.nfib%24&zoom=%5Bunsafe-ffi%5D" >"$T/dom.xml"
    ready=$(xp "$T/dom.xml" 'string(/*/@data-js)')
    matched=$(xp "$T/dom.xml" 'string(//*[@id="matched"])')
    nfib_frames=$(xp "$svg" "count($(frames_named Main.nfib))")
    nfib_sum=$(xp "$svg" "sum($(frames_named Main.nfib)/@data-n)")
    ffi_w=$(xp "$T/dom.xml" "string($(frames_named "[unsafe-ffi]")/*[local-name()=\"rect\"]/@width)")
    hs_style=$(xp "$T/dom.xml" "string($(frames_named "[haskell]")/@style)")
    all_class=$(xp "$T/dom.xml" "string($(frames_named all)/@class)")
    m_samples=$(echo "$matched" | sed -n 's/^matched: [0-9.]*% of all (\([0-9]*\) samples, \([0-9]*\) frames)$/\1/p')
    m_frames=$(echo "$matched" | sed -n 's/^matched: [0-9.]*% of all (\([0-9]*\) samples, \([0-9]*\) frames)$/\2/p')
    if [ "$ready" != ready ]; then
        fail "browser-script" "the script did not finish (data-js='$ready'): $(grep -m3 ':CONSOLE' "$T/chromium.err" | tr '\n' '|')"
    elif [ -z "$m_samples" ] || [ "$m_frames" != "$nfib_frames" ] || [ "$m_samples" -le 0 ] ||
        [ "$m_samples" -gt "$nfib_sum" ]; then
        fail "browser-script" "search: '$matched'; expected $nfib_frames frames, at most $nfib_sum samples"
    elif [ "$ffi_w" != 1180.0 ] || [ "$hs_style" != "display: none;" ] ||
        [ "$all_class" != "f t-pseudo anc" ]; then
        fail "browser-script" "zoom: [unsafe-ffi] width '$ffi_w', [haskell] style '$hs_style', all class '$all_class'"
    else
        pass "browser-script"
    fi

    # The picture: a 1400x900 PNG of many colours, the tag frames' among
    # them (counted in the browser, from a data: URL a canvas may read).
    png=$out/demo.png
    browser --screenshot="$png" --window-size=1400,900 "file://$svg" >/dev/null
    colours=$(xp "$svg" "$(frames_named "[haskell]")/*[local-name()=\"rect\"]/@fill | $(frames_named "[unsafe-ffi]")/*[local-name()=\"rect\"]/@fill | $(frames_named "[safe-ffi]")/*[local-name()=\"rect\"]/@fill" |
        grep -o '#[0-9a-f]\{6\}' | tr '\n' ' ')
    if [ ! -s "$png" ] || [ "$(head -c 8 "$png" | od -An -tx1 | tr -d ' \n')" != 89504e470d0a1a0a ]; then
        fail "screenshot" "no PNG written: $(tail -n2 "$T/chromium.err" | tr '\n' '|')"
    else
        {
            printf '<!DOCTYPE html><html><body><canvas id="c"></canvas><pre id="out"></pre><script>\n'
            printf 'var want = "%s".trim().split(" "), img = new Image();\n' "$colours"
            cat <<'EOF'
img.onload = function () {
  var c = document.getElementById('c'), seen = {}, n = 0, hex;
  c.width = img.width; c.height = img.height;
  var x = c.getContext('2d'); x.drawImage(img, 0, 0);
  var d = x.getImageData(0, 0, img.width, img.height).data;
  for (var i = 0; i < d.length; i += 4) {
    hex = '#' + ((1 << 24) | (d[i] << 16) | (d[i + 1] << 8) | d[i + 2]).toString(16).slice(1);
    if (!seen[hex]) { seen[hex] = 1; n++; }
  }
  var missing = want.filter(function (w) { return !seen[w]; });
  document.getElementById('out').textContent =
    img.width + 'x' + img.height + ' ' + n + ' colours; missing: ' + (missing.join(',') || 'none');
};
EOF
            printf 'img.src = "data:image/png;base64,'
            base64 -w0 "$png"
            printf '";\n</script></body></html>\n'
        } >"$T/probe.html"
        probe=$(browser --virtual-time-budget=5000 --dump-dom "file://$T/probe.html" |
            sed -n 's/.*<pre id="out">\([^<]*\)<.*/\1/p')
        size=$(stat -c %s "$png")
        ncol=$(echo "$probe" | sed -n 's/^1400x900 \([0-9]*\) colours; missing: none$/\1/p')
        if [ "$size" -gt 20000 ] && [ -n "$ncol" ] && [ "$ncol" -ge 50 ]; then
            pass "screenshot"
        else
            fail "screenshot" "$png: $size bytes, '$probe' (want 1400x900, >= 50 colours, tag colours$colours)"
        fi
    fi
fi

# A program without a GHC runtime: untagged frames, warm palette.
"$HSSPY" record -q -F 499 -f svg -o "$T/c.svg" -- "$W/work" 1 300 >/dev/null 2>"$T/err"
check_status "c-exit-status" $? "$T/err"
n=$(xp "$T/c.svg" "count($(frames_named leaf)[@class=\"f t-c\"])")
check "c-frames-warm" "no leaf frame of class t-c in a C program's graph" test "${n:-0}" -ge 1

# To a terminal: one line, exit status 2, and the target never touched
# (script(1) gives hsspy a pty as standard output).
script -qec "$HSSPY record -f svg -d 0.3 -- $W/sleeper 5" /dev/null </dev/null >"$T/tty" 2>&1
rc=$?
tr -d '\r' <"$T/tty" >"$T/tty.txt"
if [ $rc -eq 2 ] && [ "$(wc -l <"$T/tty.txt")" -eq 1 ] &&
    grep -q "the svg format is not for a terminal: write it to a file with -o FILE" "$T/tty.txt"; then
    pass "terminal-refused"
else
    fail "terminal-refused" "exit status $rc: $(head -c 300 "$T/tty.txt" | tr '\n' '|')"
fi
