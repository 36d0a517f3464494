# shellcheck shell=bash
# Helpers for tests against the stand-in API server (tests/lib/kubestand.py).

# A CA, a server certificate for 127.0.0.1 and a client certificate for each
# CN given, in DIR (ca.crt, srv.crt/key, CN.crt/key); 1 when openssl fails.
standin_certs() { # dir [client-cn...]
	local dir=$1
	shift
	(cd "$dir" &&
		openssl req -x509 -newkey rsa:2048 -nodes -keyout ca.key -out ca.crt -days 2 -subj /CN=stand-in-ca &&
		openssl req -newkey rsa:2048 -nodes -keyout srv.key -out srv.csr -subj /CN=127.0.0.1 &&
		printf 'subjectAltName=IP:127.0.0.1\nbasicConstraints=CA:FALSE\n' >ext &&
		openssl x509 -req -in srv.csr -CA ca.crt -CAkey ca.key -CAcreateserial -out srv.crt -days 2 \
			-extfile ext &&
		printf 'extendedKeyUsage=clientAuth\nbasicConstraints=CA:FALSE\n' >cext &&
		for cn in "$@"; do
			openssl req -newkey rsa:2048 -nodes -keyout "$cn.key" -out "$cn.csr" -subj "/CN=$cn" &&
				openssl x509 -req -in "$cn.csr" -CA ca.crt -CAkey ca.key -CAcreateserial \
					-out "$cn.crt" -days 2 -extfile cext || exit 1
		done) >/dev/null 2>&1
}
