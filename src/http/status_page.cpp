#include "http/status_page.h"

#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <ctime>
#include <functional>
#include <iterator>

namespace chsync::http {
namespace {

constexpr uint64_t kWindowMs = uint64_t{3600} * 1000;
constexpr const char* kNone = "\u2013";  // en dash

std::string TrimZero(std::string text) {
  size_t dot = text.find('.');
  if (dot != std::string::npos && text.size() == dot + 2 && text[dot + 1] == '0') text.resize(dot);
  return text;
}

std::string Thousands(uint64_t value) {
  std::string digits = std::to_string(value);
  std::string out;
  for (size_t i = 0; i < digits.size(); ++i) {
    if (i != 0 && (digits.size() - i) % 3 == 0) out += ',';
    out += digits[i];
  }
  return out;
}

std::string UtcTime(uint64_t unix_ms) {
  std::time_t seconds = static_cast<std::time_t>(unix_ms / 1000);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buffer[32];
  std::strftime(buffer, sizeof buffer, "%Y-%m-%d %H:%M:%S UTC", &tm);
  return buffer;
}

/// A <time> the page's script rewrites into the reader's local time.
std::string TimeElement(uint64_t unix_ms) {
  if (unix_ms == 0) return kNone;
  return fmt::format(R"(<time class="ts" data-ms="{}">{}</time>)", unix_ms, UtcTime(unix_ms));
}

/// 1, 2 or 5 times a power of ten, at least `raw`.
double NiceStep(double raw) {
  if (!(raw > 0)) return 1;
  double power = std::pow(10.0, std::floor(std::log10(raw)));
  for (double m : {1.0, 2.0, 2.5, 5.0, 10.0}) {
    if (m * power >= raw) return m * power;
  }
  return 10 * power;
}

std::string PhaseClass(std::string_view phase) {
  if (phase == "streaming") return "green";
  if (phase == "snapshot" || phase == "resyncing" || phase == "starting") return "blue";
  if (phase == "failed") return "red";
  if (phase == "parked" || phase == "paused") return "amber";
  return "grey";
}

/// "… and N more" under a cut list.
std::string MoreRow(size_t more, std::string_view what, int columns) {
  return fmt::format(
      R"(<tr><td colspan="{}" class="muted">… and {} more {} (chsync status --all lists every )"
      R"(one; /metrics has them by ClickHouse table)</td></tr>)",
      columns, more, what);
}

struct ChartStyle {
  const char* id;
  const char* title;
  const char* subtitle;
  const char* color;
  std::function<std::string(double)> format;
};

/// An inline SVG line chart of the hour ending at `now_ms`, drawn in viewBox units.
std::string RenderChart(const std::vector<Point>& series, uint64_t now_ms, const ChartStyle& style) {
  constexpr double kW = 560, kH = 220, kLeft = 54, kRight = 14, kTop = 14, kBottom = 30;
  const double plot_w = kW - kLeft - kRight;
  const double plot_h = kH - kTop - kBottom;
  const uint64_t start_ms = now_ms > kWindowMs ? now_ms - kWindowMs : 0;

  std::vector<Point> points;
  for (const Point& p : series) {
    if (p.unix_ms >= start_ms && p.unix_ms <= now_ms && std::isfinite(p.value)) points.push_back(p);
  }
  double max_value = 0;
  for (const Point& p : points) max_value = std::max(max_value, p.value);
  double step = NiceStep(max_value > 0 ? max_value / 4 : 0.25);
  double top = std::max(step, std::ceil(max_value / step - 1e-9) * step);
  int ticks = static_cast<int>(std::lround(top / step));

  auto x_of = [&](uint64_t ms) {
    return kLeft + plot_w * static_cast<double>(ms - start_ms) / static_cast<double>(kWindowMs);
  };
  auto y_of = [&](double v) { return kTop + plot_h * (1 - std::clamp(v, 0.0, top) / top); };

  std::string current = points.empty() ? kNone : style.format(points.back().value);
  std::string out;
  out += fmt::format(R"(<section class="panel chart-panel"><div class="panel-head"><div><h2>{}</h2>)"
                     R"(<p class="sub">{}</p></div><div class="now" style="color:{}">{}</div></div>)",
                     style.title, style.subtitle, style.color, HtmlEscape(current));

  std::string xs, ys, ts, labels;
  for (const Point& p : points) {
    if (!xs.empty()) {
      xs += ' ';
      ys += ' ';
      ts += ' ';
      labels += '|';
    }
    xs += fmt::format("{:.1f}", x_of(p.unix_ms));
    ys += fmt::format("{:.1f}", y_of(p.value));
    ts += std::to_string(p.unix_ms);
    labels += HtmlEscape(style.format(p.value));
  }
  out += fmt::format(R"(<svg class="chart" id="{}" viewBox="0 0 {} {}" role="img" aria-label="{}" )"
                     R"(data-x="{}" data-y="{}" data-t="{}" data-l="{}">)",
                     style.id, kW, kH, style.title, xs, ys, ts, labels);
  out += fmt::format(R"(<defs><linearGradient id="{}-fill" x1="0" y1="0" x2="0" y2="1">)"
                     R"(<stop offset="0" stop-color="{}" stop-opacity="0.28"/>)"
                     R"(<stop offset="1" stop-color="{}" stop-opacity="0.02"/></linearGradient></defs>)",
                     style.id, style.color, style.color);

  out += R"(<g class="grid">)";
  for (int i = 0; i <= ticks; ++i) {
    double v = step * i;
    double y = y_of(v);
    out += fmt::format(R"(<line x1="{}" y1="{:.1f}" x2="{}" y2="{:.1f}"{}/>)", kLeft, y, kW - kRight, y,
                       i == 0 ? R"( class="axis")" : "");
    out += fmt::format(R"(<text class="ylabel" x="{}" y="{:.1f}">{}</text>)", kLeft - 8, y + 4,
                       HtmlEscape(style.format(v)));
  }
  for (int minutes = 60; minutes >= 0; minutes -= 15) {
    double x = kLeft + plot_w * (60 - minutes) / 60.0;
    out += fmt::format(R"(<line class="vgrid" x1="{:.1f}" y1="{}" x2="{:.1f}" y2="{}"/>)", x, kTop, x,
                       kH - kBottom);
    out += fmt::format(R"(<text class="xlabel" x="{:.1f}" y="{}">{}</text>)", x, kH - kBottom + 18,
                       minutes == 0 ? std::string("now") : fmt::format("\u2212{} min", minutes));
  }
  out += "</g>";

  if (points.empty()) {
    out += fmt::format(R"(<text class="empty" x="{}" y="{}">no data yet</text>)", kLeft + plot_w / 2,
                       kTop + plot_h / 2 + 5);
  } else {
    std::string line;
    for (const Point& p : points) {
      if (!line.empty()) line += ' ';
      line += fmt::format("{:.1f},{:.1f}", x_of(p.unix_ms), y_of(p.value));
    }
    double base = kTop + plot_h;
    out += fmt::format(
        R"svg(<path class="area" fill="url(#{}-fill)" d="M{:.1f},{:.1f} L{} L{:.1f},{:.1f} Z"/>)svg",
        style.id, x_of(points.front().unix_ms), base, line, x_of(points.back().unix_ms), base);
    out += fmt::format(R"(<polyline class="line" stroke="{}" points="{}"/>)", style.color, line);
    out += fmt::format(R"(<circle class="last" cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)",
                       x_of(points.back().unix_ms), y_of(points.back().value), style.color);
  }
  out += fmt::format(
      R"(<g class="hover" visibility="hidden"><line class="hover-line" x1="0" y1="{}" x2="0" )"
      R"(y2="{}"/><circle class="hover-dot" r="4.5" fill="{}"/>)"
      R"(<rect class="tip-bg" rx="5" height="38"/><text class="tip"><tspan class="tip-v" dy="0"/>)"
      R"(<tspan class="tip-t"/></text></g>)",
      kTop, kH - kBottom, style.color);
  out += "</svg></section>";
  return out;
}

std::string Card(std::string_view label, std::string_view value, std::string_view sub,
                 std::string_view value_class = "") {
  return fmt::format(R"(<div class="card {}"><div class="label">{}</div><div class="value {}">{}</div>)"
                     R"(<div class="card-sub">{}</div></div>)",
                     value_class, label, value_class, value, sub);
}

std::string InfoRow(std::string_view label, std::string_view html_value) {
  return fmt::format(R"(<div class="info-row"><dt>{}</dt><dd>{}</dd></div>)", label, html_value);
}

std::string Mono(const std::string& text) {
  if (text.empty()) return kNone;
  return "<code>" + HtmlEscape(text) + "</code>";
}

}  // namespace

int TableStateRank(std::string_view state) {
  static constexpr std::string_view kOrder[] = {"parked",    "paused",    "failed",
                                                "snapshot",  "resyncing", "rebuilding",
                                                "streaming", "dropped",   "unselected"};
  for (size_t i = 0; i < std::size(kOrder); ++i) {
    if (kOrder[i] == state) return static_cast<int>(i);
  }
  return static_cast<int>(std::size(kOrder));
}

namespace {

std::string SnapshotCell(const TableRow& table) {
  if (table.snapshot_estimated == 0) {
    if (table.snapshot_copied == 0) return R"(<span class="muted">)" + std::string(kNone) + "</span>";
    return HtmlEscape(HumanCount(static_cast<double>(table.snapshot_copied))) + " rows copied";
  }
  double fraction = std::min(
      1.0, static_cast<double>(table.snapshot_copied) / static_cast<double>(table.snapshot_estimated));
  bool done = table.snapshot_copied >= table.snapshot_estimated;
  return fmt::format(
      R"(<div class="progress"><div class="bar"><span class="{}" style="width:{:.1f}%"></span></div>)"
      R"(<div class="progress-text">{:.0f}% · {} / {}</div></div>)",
      done ? "done" : "", fraction * 100, fraction * 100,
      HumanCount(static_cast<double>(table.snapshot_copied)),
      HumanCount(static_cast<double>(table.snapshot_estimated)));
}

constexpr const char* kStyle = R"CSS(
:root{--bg:#f4f6f9;--card:#fff;--text:#172033;--muted:#667085;--faint:#98a2b3;--line:#e6e9ef;
--green:#12a150;--blue:#2f6fed;--grey:#7a8494;--red:#d92d20;--amber:#dc8a06;
--mono:ui-monospace,SFMono-Regular,Menlo,Consolas,"Liberation Mono",monospace}
*{box-sizing:border-box}
body{margin:0;background:var(--bg);color:var(--text);font:14px/1.5 system-ui,-apple-system,"Segoe UI",Roboto,
"Helvetica Neue",Arial,"Noto Sans",sans-serif;-webkit-font-smoothing:antialiased}
header{background:var(--card);border-bottom:1px solid var(--line);box-shadow:0 1px 2px rgba(16,24,40,.04)}
.bar-inner{max-width:1240px;margin:0 auto;padding:14px 28px;display:flex;align-items:center;gap:14px}
.mark{width:30px;height:30px;flex:none}
h1{font-size:18px;font-weight:650;margin:0;letter-spacing:-.01em}
.route{color:var(--muted);font-size:13px;overflow:hidden;text-overflow:ellipsis;white-space:nowrap;max-width:560px}
.spacer{flex:1}
.badge{display:inline-flex;align-items:center;gap:7px;padding:4px 12px 4px 10px;border-radius:999px;
font-weight:600;font-size:13px;text-transform:capitalize}
.badge::before{content:"";width:8px;height:8px;border-radius:50%;background:currentColor}
.badge.green{color:var(--green);background:#e7f6ee}.badge.blue{color:var(--blue);background:#e9f0fe}
.badge.grey{color:var(--grey);background:#eef0f3}.badge.red{color:var(--red);background:#fdecea}
.badge.amber{color:var(--amber);background:#fdf3e1}
.badge.green::before{animation:pulse 2s infinite}
@keyframes pulse{0%{box-shadow:0 0 0 0 rgba(18,161,80,.45)}70%{box-shadow:0 0 0 7px rgba(18,161,80,0)}
100%{box-shadow:0 0 0 0 rgba(18,161,80,0)}}
.refresh{font-size:12px;color:var(--muted);background:none;border:1px solid var(--line);border-radius:8px;
padding:4px 10px;cursor:pointer;font-family:inherit}
.refresh:hover{background:#f2f4f7}
main{max-width:1240px;margin:0 auto;padding:24px 28px 40px}
.error{background:#fef3f2;border:1px solid #fecdca;border-left:4px solid var(--red);color:#912018;
border-radius:10px;padding:14px 18px;margin-bottom:20px}
.error strong{display:block;margin-bottom:4px}
.error pre{margin:0;white-space:pre-wrap;word-break:break-word;font:13px/1.5 var(--mono)}
.cards{display:grid;grid-template-columns:repeat(auto-fit,minmax(230px,1fr));gap:16px}
.card,.panel{background:var(--card);border-radius:14px;box-shadow:0 1px 2px rgba(16,24,40,.05),
0 4px 14px rgba(16,24,40,.06);border:1px solid rgba(16,24,40,.04)}
.card{padding:16px 20px 18px;position:relative;overflow:hidden}
.card::before{content:"";position:absolute;left:0;top:0;right:0;height:3px;background:var(--accent,transparent)}
.card.ok{--accent:var(--green)}.card.warn{--accent:var(--amber)}.card.bad{--accent:var(--red)}
.card.info{--accent:var(--blue)}
.label{font-size:12px;font-weight:600;text-transform:uppercase;letter-spacing:.06em;color:var(--muted)}
.value{font-size:32px;font-weight:680;letter-spacing:-.02em;margin-top:6px;line-height:1.15;
font-variant-numeric:tabular-nums}
.value.warn{color:var(--amber)}.value.bad{color:var(--red)}.value.ok{color:var(--text)}
.value.unknown{color:var(--faint)}
.card-sub{margin-top:6px;color:var(--muted);font-size:13px;font-variant-numeric:tabular-nums}
.charts{display:grid;grid-template-columns:repeat(auto-fit,minmax(460px,1fr));gap:16px;margin-top:16px}
.panel{padding:18px 20px}
.panel-head{display:flex;justify-content:space-between;align-items:flex-start;margin-bottom:6px}
h2{font-size:15px;font-weight:650;margin:0}
.sub{margin:2px 0 0;color:var(--muted);font-size:12.5px}
.now{font-size:20px;font-weight:680;font-variant-numeric:tabular-nums}
svg.chart{width:100%;height:auto;display:block;overflow:visible}
.grid line{stroke:#eef0f4;stroke-width:1}.grid line.axis{stroke:#cfd5de}
.grid line.vgrid{stroke:#f3f4f7;stroke-dasharray:3 4}
.ylabel,.xlabel{fill:#8a94a6;font-size:12.5px;font-variant-numeric:tabular-nums}
.ylabel{text-anchor:end}.xlabel{text-anchor:middle}
.empty{fill:var(--faint);font-size:16px;text-anchor:middle;font-style:italic}
.line{fill:none;stroke-width:2.2;stroke-linejoin:round;stroke-linecap:round}
.last{stroke:#fff;stroke-width:2}
.hover-line{stroke:#98a2b3;stroke-dasharray:3 3}.hover-dot{stroke:#fff;stroke-width:2}
.tip-bg{fill:#172033;opacity:.92}.tip{fill:#fff;font-size:13px;font-variant-numeric:tabular-nums}
.tip-t{fill:#cbd2dc;font-size:12px}
.two{display:grid;grid-template-columns:minmax(0,1fr) minmax(0,1.55fr);gap:16px;margin-top:16px}
@media (max-width:960px){.two{grid-template-columns:1fr}.charts{grid-template-columns:1fr}}
dl{margin:8px 0 0}
.info-row{display:grid;grid-template-columns:130px minmax(0,1fr);gap:12px;padding:8px 0;border-top:1px solid var(--line)}
.info-row:first-child{border-top:0}
dt{color:var(--muted)}dd{margin:0;word-break:break-all;font-variant-numeric:tabular-nums}
code{font:12.5px/1.5 var(--mono);background:#f2f4f7;padding:1px 6px;border-radius:5px}
table{width:100%;border-collapse:collapse;margin-top:8px;font-variant-numeric:tabular-nums}
th{text-align:left;font-size:12px;font-weight:600;text-transform:uppercase;letter-spacing:.05em;
color:var(--muted);padding:8px 10px;border-bottom:1px solid var(--line)}
td{padding:9px 10px;border-bottom:1px solid var(--line);vertical-align:middle}
tr:last-child td{border-bottom:0}
td.num,th.num{text-align:right}
td.name{font-family:var(--mono);font-size:13px;word-break:break-all}
.summary{margin:0 0 10px;line-height:2}
.pill{display:inline-block;padding:1px 9px;border-radius:999px;font-size:12px;font-weight:600}
.pill.green{color:var(--green);background:#e7f6ee}.pill.blue{color:var(--blue);background:#e9f0fe}
.pill.grey{color:var(--grey);background:#eef0f3}.pill.red{color:var(--red);background:#fdecea}
.pill.amber{color:var(--amber);background:#fdf3e1}
.progress{min-width:170px}
.progress .bar{height:8px;background:#edf0f4;border-radius:99px;overflow:hidden}
.progress .bar span{display:block;height:100%;border-radius:99px;background:linear-gradient(90deg,#5b8cff,var(--blue))}
.progress .bar span.done{background:linear-gradient(90deg,#3ccf7e,var(--green))}
.progress-text{font-size:12px;color:var(--muted);margin-top:3px}
.muted{color:var(--faint)}.small{font-size:12.5px}
.actions .arrow{color:var(--muted);font-size:12.5px;margin-right:2px}
.changes{list-style:none;margin:8px 0 0;padding:0}
.changes li{padding:12px 0;border-top:1px solid var(--line)}
.changes li:first-child{border-top:0}
.change-head{display:flex;flex-wrap:wrap;gap:6px 14px;align-items:baseline;font-size:13px}
.change-head .tbl{font-family:var(--mono);font-weight:600}
.change-head .pos,.change-head time{color:var(--muted);font-size:12px}
pre.stmt{margin:8px 0 6px;padding:10px 12px;background:#f7f8fa;border:1px solid var(--line);border-radius:8px;
white-space:pre-wrap;word-break:break-word;font:12.5px/1.5 var(--mono);max-height:160px;overflow:auto}
.actions{display:flex;flex-wrap:wrap;gap:6px}
.actions code{background:#eef4ff;color:#1d4ed8}
.empty-note{color:var(--faint);font-style:italic;padding:10px 0}
footer{max-width:1240px;margin:0 auto;padding:0 28px 28px;color:var(--faint);font-size:12px}
)CSS";

constexpr const char* kScript = R"JS(
(function(){
  document.querySelectorAll('time.ts').forEach(function(t){
    var d=new Date(Number(t.dataset.ms)); t.title=t.textContent; t.textContent=d.toLocaleString();
  });
  document.querySelectorAll('svg.chart').forEach(function(svg){
    if(!svg.dataset.x) return;
    var xs=svg.dataset.x.split(' ').map(Number), ys=svg.dataset.y.split(' ').map(Number),
        ts=svg.dataset.t.split(' ').map(Number), ls=svg.dataset.l.split('|');
    var g=svg.querySelector('.hover'), line=g.querySelector('.hover-line'), dot=g.querySelector('.hover-dot'),
        bg=g.querySelector('.tip-bg'), tip=g.querySelector('.tip'), tv=g.querySelector('.tip-v'),
        tt=g.querySelector('.tip-t');
    svg.addEventListener('mousemove',function(e){
      var p=svg.createSVGPoint(); p.x=e.clientX; p.y=e.clientY;
      var q=p.matrixTransform(svg.getScreenCTM().inverse()), best=0;
      for(var i=1;i<xs.length;i++){ if(Math.abs(xs[i]-q.x)<Math.abs(xs[best]-q.x)) best=i; }
      var x=xs[best], y=ys[best];
      line.setAttribute('x1',x); line.setAttribute('x2',x);
      dot.setAttribute('cx',x); dot.setAttribute('cy',y);
      tv.textContent=ls[best]; tt.textContent=new Date(ts[best]).toLocaleTimeString();
      var w=Math.max(tv.getComputedTextLength(),tt.getComputedTextLength())+20;
      var bx=x+12+w>550?x-12-w:x+12, by=Math.max(4,y-44);
      bg.setAttribute('x',bx); bg.setAttribute('y',by); bg.setAttribute('width',w);
      tv.setAttribute('x',bx+10); tv.setAttribute('y',by+16); tt.setAttribute('x',bx+10); tt.setAttribute('y',by+31);
      g.setAttribute('visibility','visible');
    });
    svg.addEventListener('mouseleave',function(){ g.setAttribute('visibility','hidden'); });
  });
  var paused=false, left=5, button=document.getElementById('refresh');
  function show(){ button.textContent=paused?'Paused \u00b7 resume':'Refresh in '+left+' s \u00b7 pause'; }
  button.addEventListener('click',function(){ paused=!paused; left=5; show(); });
  setInterval(function(){
    if(paused) return;
    if(--left<=0){ location.reload(); left=5; }
    show();
  },1000);
  show();
})();
)JS";

}  // namespace

std::string HtmlEscape(std::string_view text) {
  std::string out;
  out.reserve(text.size() + text.size() / 8);
  for (char c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

std::string HumanCount(double value) {
  if (std::isnan(value)) return kNone;
  double magnitude = std::fabs(value);
  if (magnitude < 1000) {
    if (magnitude < 10 && magnitude != std::floor(magnitude)) return TrimZero(fmt::format("{:.1f}", value));
    return fmt::format("{:.0f}", value);
  }
  static constexpr const char* kSuffix[] = {"k", "M", "G", "T", "P"};
  int unit = 0;
  double scaled = value / 1000;
  while (std::fabs(scaled) >= 999.95 && unit < 4) {
    scaled /= 1000;
    ++unit;
  }
  std::string number =
      std::fabs(scaled) >= 100 ? fmt::format("{:.0f}", scaled) : fmt::format("{:.1f}", scaled);
  return TrimZero(number) + kSuffix[unit];
}

std::string HumanBytes(double bytes) {
  if (std::isnan(bytes)) return kNone;
  if (std::fabs(bytes) < 1000) return fmt::format("{:.0f} B", bytes);
  static constexpr const char* kUnits[] = {"kB", "MB", "GB", "TB", "PB"};
  int unit = 0;
  double scaled = bytes / 1000;
  while (std::fabs(scaled) >= 999.95 && unit < 4) {
    scaled /= 1000;
    ++unit;
  }
  std::string number =
      std::fabs(scaled) >= 100 ? fmt::format("{:.0f}", scaled) : fmt::format("{:.1f}", scaled);
  return TrimZero(number) + " " + kUnits[unit];
}

std::string HumanDuration(double seconds) {
  if (std::isnan(seconds)) return kNone;
  if (seconds < 0) return "\u2212" + HumanDuration(-seconds);
  if (seconds < 10) return TrimZero(fmt::format("{:.1f}", seconds)) + " s";
  auto total = static_cast<uint64_t>(std::llround(seconds));
  if (total < 60) return fmt::format("{} s", total);
  if (total < 3600) {
    uint64_t s = total % 60;
    if (total >= 600 || s == 0) return fmt::format("{} min", total / 60);
    return fmt::format("{} min {} s", total / 60, s);
  }
  if (total < 86400) {
    uint64_t m = (total % 3600) / 60;
    return m == 0 ? fmt::format("{} h", total / 3600) : fmt::format("{} h {} min", total / 3600, m);
  }
  uint64_t h = (total % 86400) / 3600;
  return h == 0 ? fmt::format("{} d", total / 86400) : fmt::format("{} d {} h", total / 86400, h);
}

std::string RenderStatusPage(const StatusPageData& data) {
  uint64_t now_ms = data.now_ms;
  if (now_ms == 0) {
    now_ms = static_cast<uint64_t>(std::chrono::duration_cast<std::chrono::milliseconds>(
                                       std::chrono::system_clock::now().time_since_epoch())
                                       .count());
  }
  std::string title = data.title.empty() ? std::string("chsync") : data.title;
  std::string phase = data.phase.empty() ? std::string("unknown") : data.phase;

  std::string out;
  out.reserve(size_t{32} * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">";
  out += R"(<meta name="viewport" content="width=device-width, initial-scale=1">)";
  out += R"(<noscript><meta http-equiv="refresh" content="5"></noscript>)";
  out += "<title>" + HtmlEscape(title) + " \u00b7 " + HtmlEscape(phase) + "</title>";
  out += "<style>";
  out += kStyle;
  out += "</style></head><body>";

  // Header bar.
  out += R"(<header><div class="bar-inner">)";
  out +=
      R"(<svg class="mark" viewBox="0 0 32 32" aria-hidden="true"><rect width="32" height="32" rx="8" fill="#172033"/>)"
      R"(<path d="M8 12h12l-3-3M24 20H12l3 3" stroke="#ffcc33" stroke-width="2.4" fill="none" )"
      R"(stroke-linecap="round" stroke-linejoin="round"/></svg>)";
  out += "<div><h1>" + HtmlEscape(title) + "</h1>";
  out += R"(<div class="route">)";
  out += HtmlEscape(data.source.empty() ? std::string("source") : data.source);
  out += " \u2192 ";
  out += HtmlEscape(data.destination.empty() ? std::string("destination") : data.destination);
  out += "</div></div>";
  out += fmt::format(R"(<span class="badge {}">{}</span>)", PhaseClass(phase), HtmlEscape(phase));
  out +=
      R"(<span class="spacer"></span><button class="refresh" id="refresh" type="button">auto-refresh 5 s</button>)";
  out += "</div></header><main>";

  if (!data.last_error.empty()) {
    out += R"(<div class="error" role="alert"><strong>Last error</strong><pre>)" +
           HtmlEscape(data.last_error) + "</pre></div>";
  }

  // Cards.
  double rate = std::numeric_limits<double>::quiet_NaN();
  if (!data.rate_series.empty()) rate = data.rate_series.back().value;
  std::string lag_class = "unknown";
  if (std::isfinite(data.lag_seconds)) {
    lag_class = data.lag_seconds >= 300 ? "bad" : data.lag_seconds >= 30 ? "warn" : "ok";
  }
  std::string since = std::isfinite(data.seconds_since_last_event)
                          ? "last event " + HumanDuration(data.seconds_since_last_event) + " ago"
                          : std::string("no event yet");
  out += R"(<div class="cards">)";
  out += Card("Replication lag", HtmlEscape(HumanDuration(data.lag_seconds)), HtmlEscape(since), lag_class);
  out += Card("Row changes / s", HtmlEscape(HumanCount(rate)),
              HtmlEscape(Thousands(data.transactions) + " transactions applied"),
              std::isnan(rate) ? "unknown" : "info");
  out += Card("Rows applied", HtmlEscape(HumanCount(static_cast<double>(data.rows_applied))),
              HtmlEscape(Thousands(data.rows_applied) + " rows since the start"), "info");
  std::string headroom = HumanDuration(data.retention_headroom_seconds);
  std::string headroom_sub = std::isfinite(data.retention_headroom_bytes)
                                 ? HumanBytes(data.retention_headroom_bytes) + " of binlog before purge"
                                 : std::string("binlog retention not known yet");
  std::string headroom_class = "unknown";
  if (std::isfinite(data.retention_headroom_seconds)) {
    headroom_class = data.retention_headroom_seconds < 3600       ? "bad"
                     : data.retention_headroom_seconds < 6 * 3600 ? "warn"
                                                                  : "ok";
  } else if (std::isfinite(data.retention_headroom_bytes)) {
    headroom = HumanBytes(data.retention_headroom_bytes);
    headroom_sub = "of binlog before purge";
    headroom_class = "ok";
  }
  out += Card("Retention headroom", HtmlEscape(headroom), HtmlEscape(headroom_sub), headroom_class);
  out += "</div>";

  // Charts.
  out += R"(<div class="charts">)";
  out += RenderChart(data.lag_series, now_ms,
                     {"lag", "Replication lag", "seconds behind the source, last hour", "#dc8a06",
                      [](double v) { return HumanDuration(v); }});
  out += RenderChart(data.rate_series, now_ms,
                     {"rate", "Row changes per second", "applied to ClickHouse, last hour", "#2f6fed",
                      [](double v) { return HumanCount(v) + "/s"; }});
  out += "</div>";

  // Position and timings beside the tables.
  out += R"(<div class="two"><section class="panel"><h2>Pipe</h2><dl>)";
  out += InfoRow("Source", Mono(data.source));
  out += InfoRow("Destination", Mono(data.destination));
  out += InfoRow("Position", Mono(data.position));
  out += InfoRow("GTID position", Mono(data.gtid_position));
  std::string started = TimeElement(data.started_at_ms);
  if (data.started_at_ms != 0 && now_ms > data.started_at_ms) {
    started += R"(<div class="muted small">running for )" +
               HtmlEscape(HumanDuration(static_cast<double>(now_ms - data.started_at_ms) / 1000)) + "</div>";
  }
  out += InfoRow("Started", started);
  out += InfoRow("Updated", TimeElement(data.updated_at_ms));
  out += InfoRow("Transactions", HtmlEscape(Thousands(data.transactions)));
  out += "</dl></section>";

  uint64_t sources = 0;
  for (const auto& [state, count] : data.table_states) sources += count;
  std::string sub =
      data.tables.size() == 1 ? std::string("1 table") : fmt::format("{} tables", data.tables.size());
  if (sources > data.tables.size()) sub = fmt::format("{} source tables into {}", sources, sub);
  out += fmt::format(R"(<section class="panel"><h2>Tables</h2><p class="sub">{} replicated</p>)", sub);
  if (!data.table_states.empty()) {
    // The counts first: thousands of tables read as a line.
    std::vector<std::pair<std::string, uint64_t>> states = data.table_states;
    std::stable_sort(states.begin(), states.end(), [](const auto& a, const auto& b) {
      return TableStateRank(a.first) < TableStateRank(b.first);
    });
    out += R"(<p class="summary">)";
    for (const auto& [state, count] : states) {
      if (count == 0) continue;
      out += fmt::format(R"(<span class="pill {}">{} {}</span> )", PhaseClass(state), Thousands(count),
                         HtmlEscape(state));
    }
    out += "</p>";
  }
  const size_t limit = data.max_table_rows == 0 ? SIZE_MAX : data.max_table_rows;
  if (!data.held.empty()) {
    out += R"(<table><thead><tr><th>Held table</th><th>State</th></tr></thead><tbody>)";
    for (size_t i = 0; i < data.held.size() && i < limit; ++i) {
      out += fmt::format(R"(<tr><td class="name">{}</td><td><span class="pill {}">{}</span></td></tr>)",
                         HtmlEscape(data.held[i].name), PhaseClass(data.held[i].state),
                         HtmlEscape(data.held[i].state));
    }
    if (data.held.size() > limit) out += MoreRow(data.held.size() - limit, "held tables", 2);
    out += "</tbody></table>";
  }
  if (data.tables.empty()) {
    out += R"(<div class="empty-note">no tables yet</div>)";
  } else {
    std::vector<const TableRow*> rows;
    rows.reserve(data.tables.size());
    for (const TableRow& table : data.tables) rows.push_back(&table);
    std::stable_sort(rows.begin(), rows.end(), [](const TableRow* a, const TableRow* b) {
      return TableStateRank(a->state) < TableStateRank(b->state);
    });
    out += R"(<table><thead><tr><th>Table</th><th>State</th><th class="num">Rows applied</th>)"
           R"(<th>Snapshot</th></tr></thead><tbody>)";
    for (size_t i = 0; i < rows.size() && i < limit; ++i) {
      const TableRow& table = *rows[i];
      std::string name = HtmlEscape(table.name);
      if (table.sources > 1) {
        name += fmt::format(R"(<div class="muted small">{} source tables</div>)", Thousands(table.sources));
      }
      out +=
          fmt::format(R"(<tr><td class="name">{}</td><td><span class="pill {}">{}</span></td>)"
                      R"(<td class="num" title="{}">{}</td><td>{}</td></tr>)",
                      name, PhaseClass(table.state),
                      HtmlEscape(table.state.empty() ? std::string("unknown") : table.state),
                      Thousands(table.rows_applied),
                      HtmlEscape(HumanCount(static_cast<double>(table.rows_applied))), SnapshotCell(table));
    }
    if (rows.size() > limit) out += MoreRow(rows.size() - limit, "tables", 4);
    out += "</tbody></table>";
  }
  out += "</section></div>";

  // Schema changes, newest first.
  std::vector<const SchemaChangeRow*> changes;
  changes.reserve(data.schema_changes.size());
  for (const SchemaChangeRow& change : data.schema_changes) changes.push_back(&change);
  std::stable_sort(changes.begin(), changes.end(),
                   [](const SchemaChangeRow* a, const SchemaChangeRow* b) { return a->at_ms > b->at_ms; });
  out += R"(<section class="panel" style="margin-top:16px"><h2>Schema changes</h2>)"
         R"(<p class="sub">DDL seen in the binlog and what chsync did in ClickHouse, newest first</p>)";
  if (changes.empty()) {
    out += R"(<div class="empty-note">no schema changes since the start</div>)";
  } else {
    out += R"(<ul class="changes">)";
    for (const SchemaChangeRow* change : changes) {
      out += R"(<li><div class="change-head">)";
      out += R"(<span class="tbl">)" +
             HtmlEscape(change->table.empty() ? std::string("(no table)") : change->table) + "</span>";
      out += TimeElement(change->at_ms);
      if (!change->position.empty())
        out += R"(<span class="pos">at )" + HtmlEscape(change->position) + "</span>";
      out += R"(</div><pre class="stmt">)" + HtmlEscape(change->statement) + "</pre>";
      out += R"(<div class="actions"><span class="arrow">ClickHouse:</span>)";
      if (change->actions.empty()) out += R"(<span class="muted small">nothing to change</span>)";
      for (const std::string& action : change->actions) out += "<code>" + HtmlEscape(action) + "</code>";
      out += "</div></li>";
    }
    out += "</ul>";
  }
  out += "</section></main>";
  out += "<footer>rendered " + TimeElement(now_ms) + " \u00b7 refreshes every 5 s \u00b7 chsync</footer>";
  out += "<script>";
  out += kScript;
  out += "</script></body></html>\n";
  return out;
}

}  // namespace chsync::http
