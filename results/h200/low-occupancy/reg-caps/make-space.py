import sys, json, itertools, subprocess
sys.path.insert(0,'scripts')
from space_file import write_space
src=json.load(open('results/databases/nvidia-h200.json'))
base=dict(ALDCOPY=0,ASYNC=0,BKM=0,DOT2=0,GLH=0,GLV=4,GROUPM=8,KREDUCE=0,KSL=1,LDS=1,PADA=0,PADB=0,
          SPLITK=1,STRM=1,STRN=1,SWZ=0,WSP=0)
tiles=[dict(MWG=64,NWG=128,MDIMC=8,NDIMC=16),dict(MWG=128,NWG=64,MDIMC=16,NDIMC=8)]
confs=[]
for t,rc,(kwg,kwi),(st,pf,asy),vwm,vwn in itertools.product(tiles,[0,168,255],[(8,8),(16,16),(16,8)],
        [(1,1,0),(2,1,0),(2,0,0),(3,1,1)],[2,4],[4,8]):
    c=dict(base); c.update(t); c.update(REGCAP=rc,KWG=kwg,KWI=kwi,STAGES=st,PREFETCH=pf,ASYNC=asy,VWM=vwm,VWN=vwn)
    confs.append(c)
ok=[]
for c in confs:
    text=",".join(f"{k}={v}" for k,v in sorted(c.items()))
    r=subprocess.run(['build/gemmtune','--templates','BUILD/tv3','space','--kernel','xgemm_fast','--space','full','--check',text],capture_output=True,text=True)
    if r.returncode==0: ok.append(c)
    else: print(r.stderr.strip().splitlines()[-1][:150])
print(len(confs),len(ok))
write_space(sys.argv[1],src,'xgemm_fast',ok,'variants')
