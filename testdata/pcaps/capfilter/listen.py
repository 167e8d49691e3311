import socket, threading, time
def serve(fam, addr):
    s=socket.socket(fam, socket.SOCK_STREAM); s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR,1); s.bind((addr,20049)); s.listen(8); s.settimeout(8)
    try:
        while True:
            c,_=s.accept(); c.recv(100); c.close()
    except Exception: pass
threading.Thread(target=serve,args=(socket.AF_INET,'0.0.0.0')).start()
threading.Thread(target=serve,args=(socket.AF_INET6,'::')).start()
