import csv,sys,collections
f=sys.argv[1]
rows=list(csv.reader(open(f)))
hdr=rows[1]; data=rows[2:]
ix={h:i for i,h in enumerate(hdr)}
stalls=[h for h in hdr if h.startswith('stall_') and 'Not Issued' not in h]
tot=collections.Counter(); n=0
ops=collections.Counter(); opsamp=collections.Counter()
for r in data:
    if len(r)<len(hdr)-1: continue
    try: s=int(r[ix['# Samples']])
    except: continue
    n+=s
    for h in stalls:
        try: tot[h]+=int(r[ix[h]])
        except: pass
    op=r[ix['Source']].strip().split()[0] if r[ix['Source']].strip() else ''
    if op.startswith('@'): op=r[ix['Source']].strip().split()[1]
    op=op.split('.')[0]
    ops[op]+=int(r[ix['Instructions Executed']] or 0); opsamp[op]+=s
print('samples',n)
for h,v in tot.most_common(10): print(' %-22s %5.1f%%'%(h,100*v/n))
print('instr executed by op (warp-level):')
T=sum(ops.values())
for o,v in ops.most_common(14): print(' %-8s %9d %5.1f%%  samples %5.1f%%'%(o,v,100*v/T,100*opsamp[o]/n))
