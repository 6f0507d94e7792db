// Does a profiling queue slow queued calls? Host-clock slope over N1 and N2 calls behind a busy
// kernel, on a profiled and a plain queue; plus the event span on the profiled queue.
#define CL_TARGET_OPENCL_VERSION 120
#include <CL/cl.h>
#include <gemmtune/gemmtune.hpp>
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <random>
#include <string>
#include <vector>
using Clk = std::chrono::steady_clock;
static const char* src = R"(__kernel void busy(__global uint* s, const uint it){uint x=get_global_id(0)+1u;for(uint i=0;i<it;++i)x=x*1664525u+1013904223u;if(x==0u)s[0]=x;})";
#define CK(x) do{cl_int e_=(x); if(e_!=CL_SUCCESS){fprintf(stderr,"%s: %d\n",#x,e_);exit(1);}}while(0)
static double med(std::vector<double> v){std::sort(v.begin(),v.end());return v[v.size()/2];}
int main(int argc,char**argv){
  cl_platform_id pl[8]; cl_uint np; CK(clGetPlatformIDs(8,pl,&np));
  cl_device_id dev=nullptr; for(cl_uint i=0;i<np&&!dev;++i){cl_uint nd; if(clGetDeviceIDs(pl[i],getenv("PROBE_CPU")?CL_DEVICE_TYPE_ALL:CL_DEVICE_TYPE_GPU,1,&dev,&nd)!=CL_SUCCESS) dev=nullptr;}
  if(!dev){fprintf(stderr,"no gpu\n");return 1;}
  cl_int err; cl_context ctx=clCreateContext(nullptr,1,&dev,nullptr,nullptr,&err); CK(err);
  cl_command_queue qp=clCreateCommandQueue(ctx,dev,CL_QUEUE_PROFILING_ENABLE,&err); CK(err);
  cl_command_queue qn=clCreateCommandQueue(ctx,dev,0,&err); CK(err);
  cl_program prog=clCreateProgramWithSource(ctx,1,&src,nullptr,&err); CK(err); CK(clBuildProgram(prog,1,&dev,"",nullptr,nullptr));
  cl_kernel busy=clCreateKernel(prog,"busy",&err); CK(err);
  cl_mem sink=clCreateBuffer(ctx,CL_MEM_READ_WRITE,4,nullptr,&err); CK(err);
  CK(clSetKernelArg(busy,0,sizeof(cl_mem),&sink));
  // calibrate
  cl_uint cal=1u<<20; CK(clSetKernelArg(busy,1,4,&cal)); size_t one=1; cl_event ev;
  CK(clEnqueueNDRangeKernel(qp,busy,1,nullptr,&one,&one,0,nullptr,&ev)); CK(clFinish(qp));
  cl_ulong s,e; clGetEventProfilingInfo(ev,CL_PROFILING_COMMAND_START,8,&s,nullptr); clGetEventProfilingInfo(ev,CL_PROFILING_COMMAND_END,8,&e,nullptr);
  double ns_per_it=double(e-s)/cal; clReleaseEvent(ev);
  int n1=atoi(argv[1]), n2=atoi(argv[2]), reps=atoi(argv[3]);
  for(int a=4;a+2<argc;a+=3){
    size_t M=atoi(argv[a]),N=atoi(argv[a+1]),K=atoi(argv[a+2]);
    std::vector<float> ha(M*K),hb(K*N); std::mt19937 g(1); std::uniform_real_distribution<float> u(-1,1);
    for(auto&x:ha)x=u(g); for(auto&x:hb)x=u(g);
    cl_mem A=clCreateBuffer(ctx,CL_MEM_READ_ONLY|CL_MEM_COPY_HOST_PTR,4*M*K,ha.data(),&err);CK(err);
    cl_mem B=clCreateBuffer(ctx,CL_MEM_READ_ONLY|CL_MEM_COPY_HOST_PTR,4*K*N,hb.data(),&err);CK(err);
    cl_mem C=clCreateBuffer(ctx,CL_MEM_READ_WRITE,4*M*N,nullptr,&err);CK(err);
    auto call=[&](cl_command_queue q,cl_event* ev){ auto st=gemmtune::Gemm<float>(gemmtune::Layout::kRowMajor,gemmtune::Transpose::kNo,gemmtune::Transpose::kNo,M,N,K,1.0f,A,0,K,B,0,N,0.0f,C,0,N,&q,ev); if(st!=gemmtune::StatusCode::kSuccess){fprintf(stderr,"gemm failed %s\n",gemmtune::LastErrorMessage());exit(1);} };
    for(int i=0;i<20;++i){call(qp,nullptr);call(qn,nullptr);} clFinish(qp); clFinish(qn);
    // host cost without busy
    double busy_ms = std::max(2.0, n2*0.03*2);
    cl_uint it=cl_uint(busy_ms*1e6/ns_per_it); CK(clSetKernelArg(busy,1,4,&it));
    auto host_batch=[&](cl_command_queue q,int n,bool withbusy,double* span){
      cl_event be=nullptr, le=nullptr;
      auto t0=Clk::now();
      if(withbusy) CK(clEnqueueNDRangeKernel(q,busy,1,nullptr,&one,&one,0,nullptr,span?&be:nullptr));
      for(int i=0;i<n;++i) call(q,(span&&i==n-1)?&le:nullptr);
      CK(clFinish(q));
      double ms=std::chrono::duration<double,std::milli>(Clk::now()-t0).count();
      if(span){cl_ulong be_end,le_end; clGetEventProfilingInfo(be,CL_PROFILING_COMMAND_END,8,&be_end,nullptr); clGetEventProfilingInfo(le,CL_PROFILING_COMMAND_END,8,&le_end,nullptr); *span=double(le_end-be_end)*1e-6/n; clReleaseEvent(be); clReleaseEvent(le);} 
      return ms; };
    std::vector<double> p1,p2,q1,q2,sp,hp,hq;
    for(int r=0;r<reps;++r){
      double sspan;
      p1.push_back(host_batch(qp,n1,true,nullptr)); q1.push_back(host_batch(qn,n1,true,nullptr));
      p2.push_back(host_batch(qp,n2,true,nullptr)); q2.push_back(host_batch(qn,n2,true,nullptr));
      host_batch(qp,n2,true,&sspan); sp.push_back(sspan);
      hp.push_back(host_batch(qp,n2,false,nullptr)/n2); hq.push_back(host_batch(qn,n2,false,nullptr)/n2);
    }
    gemmtune::GemmProblem pr; pr.m=M; pr.n=N; pr.k=K; gemmtune::Explanation ex; gemmtune::Explain(pr,qn,&ex);
    double slope_p=(med(p2)-med(p1))/(n2-n1)*1e3, slope_q=(med(q2)-med(q1))/(n2-n1)*1e3;
    printf("%zux%zux%zu  slope profiled %.2f us  slope plain %.2f us  event span profiled %.2f us  host cost profiled %.2f plain %.2f us  kernel %s\n",
      M,N,K,slope_p,slope_q,med(sp)*1e3,med(hp)*1e3,med(hq)*1e3,
      ex.parameters.c_str());
    fflush(stdout);
    clReleaseMemObject(A);clReleaseMemObject(B);clReleaseMemObject(C);
  }
}
