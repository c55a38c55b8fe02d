# Reads a TUNEKIT_TRACE_BUILDS log (docs/data/build-pipeline-trace.patch): how long builds ran, how many at once, and the gaps. Usage: python3 analyze-build-trace.py LOG
import sys
# TRACE t what tag lines -> builder busy time, idle gaps while measuring, inline builds
ev=[]
for line in open(sys.argv[1]):
    if line.startswith('TRACE '):
        _,t,w,tag=line.split(); ev.append((float(t),w,int(tag)))
if not ev: sys.exit('no trace')
hist={}; running=0; last=ev[0][0]; busy=0; idle_while_measuring=0; measuring=False; waits=0; wait_start=None
builds=0; inline=0; tuning_waiting=0
for t,w,tag in ev:
    dt=t-last
    hist[running]=hist.get(running,0)+dt
    if running>0: busy+=dt
    elif measuring: idle_while_measuring+=dt
    last=t
    if w=='build-start': running+=1; builds+=1
    elif w=='build-end': running-=1
    elif w=='inline-start': inline+=1
    elif w=='wait': measuring=False; wait_start=t
    elif w=='go': measuring=True; tuning_waiting+=t-wait_start
span=ev[-1][0]-ev[0][0]
print(f"span {span:.2f} s, builds on the pool {builds}, inline {inline}")
print(f"some build running: {busy:.2f} s ({100*busy/span:.0f}%)")
print(f"no build running while the tuning thread measures/validates: {idle_while_measuring:.2f} s")
print(f"tuning thread waiting for its next build: {tuning_waiting:.2f} s")
print("time at each count of builds running:", ", ".join(f"{k}: {v:.2f} s" for k,v in sorted(hist.items())))
