import re,sys,math
trace=open(sys.argv[1]).read().splitlines()
judge=open(sys.argv[2]).read().splitlines()
order={}
for l in trace:
    if not l.startswith('order '): continue
    f=[x.strip() for x in l.split('|')]
    n=int(f[0].split()[1]); name=f[1]; med=float(f[4].split()[1]); st=int(f[5].split()[1])
    if name not in order: order[name]=(n,med,st,f[2])
for l in trace:
    if l.startswith('handover '):
        f=l.split(); name=f[1]; again=float(f[5])
        if name in order: n,med,st,lead=order[name]; order[name]=(n,again,st,lead)
jr={}
for l in judge:
    m=re.match(r"\s+(\S+\[.*?\])\s+([0-9.]+)x the best",l)
    if m: jr[m.group(1)]=float(m.group(2))
rows=[]
for name,r in jr.items():
    if name in order and order[name][2]==0:
        n,med,st,lead=order[name]; rows.append((n,med,r,med/r,name))
rows.sort()
best=min(x[3] for x in rows)
for n,med,r,scale,name in rows: print(f"{n:4d} {med:9.2f} judged {r:.3f} scale {scale/best:.3f} {name}")
# correlation of log(scale) with order
xs=[x[0] for x in rows]; ys=[math.log(x[3]) for x in rows]
mx=sum(xs)/len(xs); my=sum(ys)/len(ys)
cov=sum((a-mx)*(b-my) for a,b in zip(xs,ys)); vx=sum((a-mx)**2 for a in xs); vy=sum((b-my)**2 for b in ys)
print("n",len(rows),"corr(order, log scale)", cov/math.sqrt(vx*vy), "slope per 10 candidates %.2f%%"%(100*(math.exp(10*cov/vx)-1)))
